-- lib/enqueue.lua (shared: enqueue.lua, fire.lua and ticks.lua run these same functions)

-- The error text when counter, wait and jobs are not one queue's keys; nil when they are.
local function enqueue_keys_error(counter, wait, jobs)
  local tag = wait:sub(1, -6)  -- emq:{q} of <tag>:wait
  if wait:sub(-5) ~= ':wait' or counter ~= tag .. ':id' or jobs ~= tag .. ':job:' then
    return 'KEYS must be one queue\'s counter, wait list and job prefix'
  end
  return nil
end

-- The error text when an occurrence's arguments are malformed; nil when they are well formed.
local function enqueue_args_error(job_id, name, fired_at, template)
  if type(name) ~= 'string' or name == '' then
    return 'name must be a non-empty string'
  end
  if type(fired_at) ~= 'string' or not fired_at:match('^%-?%d+$') or #fired_at > 16 then
    return 'fired_at_ms must be an integer'
  end
  if type(template) ~= 'string' then
    return 'template is missing'
  end
  if type(job_id) ~= 'string' or (job_id ~= ''
      and (job_id:sub(1, #name + 1) ~= name .. ':' or not job_id:sub(#name + 2):match('^%-?%d+$'))) then
    return 'job_id must be empty (mint one) or <name>:<slot_ms>'
  end
  return nil
end

-- The fresh job id of the counter's number n: JOB-000001, JOB-000002, ...
local function fresh_id(n)
  return string.format('JOB-%06d', n)
end

-- Take n numbers from the counter at once (INCRBY: the numbers n INCRs would give); returns the
-- first. A batch that fires n rows mints their ids with one call.
local function mint(counter, n)
  return redis.call('INCRBY', counter, n) - n + 1
end

-- Write the job hash of an occurrence and push its id (no checks: the caller has made them).
-- With a table as pushed, the id is appended to it instead of pushed: the caller pushes them all
-- in one LPUSH (LPUSH a b c leaves the list as LPUSH a, LPUSH b, LPUSH c would).
local function store_one(wait, job, job_id, name, fired_at, template, pushed)
  redis.call('HSET', job, 'id', job_id, 'name', name, 'fired_at_ms', fired_at, 'template', template)
  if pushed then
    pushed[#pushed + 1] = job_id
  else
    redis.call('LPUSH', wait, job_id)
  end
end

-- Store one occurrence (arguments checked) and push its id: 1, id when stored; 0, id when a
-- job with this id exists (a replayed slot), nothing written. job_id "" mints a fresh id (INCR).
-- pushed: as store_one's.
local function enqueue_one(counter, wait, jobs, job_id, name, fired_at, template, pushed)
  if job_id == '' then
    job_id = fresh_id(redis.call('INCR', counter))
  end
  local job = jobs .. job_id
  if redis.call('EXISTS', job) == 1 then
    return 0, job_id
  end
  store_one(wait, job, job_id, name, fired_at, template, pushed)
  return 1, job_id
end
