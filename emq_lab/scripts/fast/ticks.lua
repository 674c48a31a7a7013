-- ticks: the fast-forward's batch script. Many ticks of the pump in one call, each reading its
-- due rows and firing them (enqueue.lua's store, then the rule's next run and advance.lua's
-- write), so that ten thousand ticks take a few round trips. The course's flat scripts say the
-- same thing one step at a time; the equivalence tests keep this file in step with them.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
--                    (each member's record is KEYS[1] .. ':' .. name, on the same hash slot)
-- KEYS[2]  counter   emq:{q}:id             STRING, the last fresh job number
-- KEYS[3]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- KEYS[4]  jobs      emq:{q}:job:           prefix of the job hashes; a job's key is KEYS[4] .. job_id
-- ARGV[1]  now_ms    the first tick's "now", in milliseconds
-- ARGV[2]  tick_ms   the time between two ticks; 0 = a tick at each moment a row falls due. A
--                    tick that would find nothing due is passed over (it would read nothing and
--                    write nothing)
-- ARGV[3]  batch     the most rows one tick takes, an integer from 1 to 1000
-- ARGV[4]  reads     the most ticks this call takes, an integer from 1 to 10000
-- ARGV[5]  want      stop after the tick at which this many occurrences have fired (jobs stored,
--                    not replayed slots), 1 to 10000
--
-- One call's work is bounded whatever its ARGV, so that it never holds the server (every
-- learner of a class shares it) for long: larger batch, reads or want are refused, and the call
-- stops (more = 1) once it has read 5000 registry rows or copied 4 MiB of templates into jobs.
-- A stop inside a tick leaves next_now at that tick, so the next call takes up its other rows.
-- A registry of one row (the fast-forward's, an explorer lane's) is read once a call: nothing
-- else writes while the script runs, so the next ticks know its score, and its last advance is
-- written once, at the end (the same state as a write a tick, in a quarter of the calls).
-- ARGV[6]  ids       "fresh" = mint JOB-000001 from the counter; "slot" = <name>:<slot_ms>
-- ARGV[7]  rule      "start-to-start": next = now + every_ms; "fixed grid": the slot after the
--                    one that fired, missed slots skipped; "start-to-finish": the pump leaves the
--                    row for the finish of its run
-- ARGV[8]  finish    "" = no finish here; else (start-to-finish) each run finishes this many ms
--                    after its release and its finish advances the row to finish + every_ms
--
-- Returns {next_now, more, then six entries a row taken, in order:
--          name, job_id, slot_ms, fired_at_ms, enqueued, advanced}
--   next_now     the now the next call takes up from (the tick after the last one taken), text
--   more         1 when the call stopped at its reads or its work bound (more may be due), 0
--                when it fired what it wanted or nothing is registered
--   name, job_id the row's name and its job's id ("" when its record was gone)
--   slot_ms, fired_at_ms  the score the tick read and the tick's now, as text (ms)
--   enqueued     1 stored (Outcome.ENQUEUED), 0 the id exists (DUPLICATE), -1 record gone,
--                2 refused (OVERSIZED): the stored template is over MAX_TEMPLATE_BYTES (65536, what
--                register allows; a learner's own HSET can store more), so it is never read
--                (HSTRLEN first) and no job is stored; the row still advances by the rule
--   advanced     1 advanced by the rule (Outcome.ADVANCED), 0 record gone: member swept
--                (ABSENT), -1 left for its finish; never 2 (MOVED): nothing runs beside a
--                script, so a row still holds the score this call read
--   error reply when the KEYS are not one queue's or ARGV is malformed; nothing is written
local registry, counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ids, rule, finish = ARGV[6], ARGV[7], ARGV[8]
local MAX_BATCH, MAX_READS, MAX_WANT = 1000, 10000, 10000  -- scripts/__init__.py says the same
local MAX_ROWS, MAX_BYTES = 5000, 4 * 1024 * 1024  -- registry rows read, template bytes copied
local MAX_TEMPLATE_BYTES = 65536  -- as validate.py and register.lua

-- The error text when counter, wait and jobs are not one queue's keys; nil when they are.
local function enqueue_keys_error(counter, wait, jobs)
  local tag = wait:sub(1, -6)  -- emq:{q} of <tag>:wait
  if wait:sub(-5) ~= ':wait' or counter ~= tag .. ':id' or jobs ~= tag .. ':job:' then
    return 'KEYS must be one queue\'s counter, wait list and job prefix'
  end
  return nil
end

-- The counter, read once (after the checks below): this call mints its fresh ids from it and
-- writes it back at its end, what one INCR a job would leave (nothing runs beside a script).
local minted, counted

-- Store one occurrence (arguments checked): 1, id when stored; 0, id when a job with this id
-- exists (a replayed slot), nothing written. job_id "" mints a fresh id. As enqueue.lua,
-- except that the id is appended to pushed: the call pushes them all at its end.
local function enqueue_one(jobs, job_id, name, fired_at_ms, template, pushed)
  if job_id == '' then
    minted = minted + 1
    job_id = string.format('JOB-%06d', minted)
  end
  local job = jobs .. job_id
  if redis.call('EXISTS', job) == 1 then
    return 0, job_id
  end
  redis.call('HSET', job, 'id', job_id, 'name', name, 'fired_at_ms', fired_at_ms, 'template', template)
  pushed[#pushed + 1] = job_id
  return 1, job_id
end

local function whole(text, least)
  if type(text) ~= 'string' or not text:match('^%-?%d+$') or #text > 16 then
    return nil
  end
  local n = tonumber(text)
  if n < least then
    return nil
  end
  return n
end

local now = whole(ARGV[1], -1e16)
local tick, batch, reads, want = whole(ARGV[2], 0), whole(ARGV[3], 1), whole(ARGV[4], 1), whole(ARGV[5], 1)
local bad = enqueue_keys_error(counter, wait, jobs)
if not bad and registry ~= wait:sub(1, -6) .. ':repeat' then
  bad = 'KEYS[1] must be the registry of the queue whose wait list is KEYS[3]'
elseif not bad and not now then
  bad = 'now_ms must be an integer'
elseif not bad and not tick then
  bad = 'tick_ms must be an integer >= 0'
elseif not bad and (not batch or batch > MAX_BATCH) then
  bad = 'batch must be an integer from 1 to ' .. MAX_BATCH
elseif not bad and (not reads or reads > MAX_READS) then
  bad = 'reads must be an integer from 1 to ' .. MAX_READS
elseif not bad and (not want or want > MAX_WANT) then
  bad = 'want must be an integer from 1 to ' .. MAX_WANT
elseif not bad and ids ~= 'fresh' and ids ~= 'slot' then
  bad = 'ids must be "fresh" or "slot"'
elseif not bad and rule ~= 'start-to-start' and rule ~= 'fixed grid' and rule ~= 'start-to-finish' then
  bad = 'rule must be "start-to-start", "fixed grid" or "start-to-finish"'
elseif not bad and finish ~= '' and (rule ~= 'start-to-finish' or not whole(finish, 0)) then
  bad = 'finish must be "" or, under start-to-finish, an integer >= 0'
end
if bad then
  return redis.error_reply('ERR emq ticks: ' .. bad)
end
minted = tonumber(redis.call('GET', counter) or '0')
counted = minted

-- A time in ms as its digits. '%.0f', not '%d': fengari (Lua 5.3, the JupyterLite edition) has
-- 32-bit integers, so a time past 2^31 is a float there, and '%d' refuses any float.
local texts = {}  -- each time's digits, made once (the rows of a tick share a now)
local function ms(n)
  local digits = texts[n]
  if not digits then
    digits = n == 0 and '0' or string.format('%.0f', n)
    texts[n] = digits
  end
  return digits
end

-- The score the rule gives a row read at slot after a release at now (nil: left for its finish).
local function next_run(slot, every_ms)
  if rule == 'start-to-start' then
    return now + every_ms
  elseif rule == 'fixed grid' then
    if slot + every_ms >= now then
      return slot + every_ms
    end
    return slot + (math.floor((now - slot) / every_ms) + 1) * every_ms
  end
  return nil
end

local records = {}  -- name -> {every_ms, template}: nothing in this call writes a record
local only  -- {name, score, moved}: the registry's one row, once a read found it alone

-- The tick's read: the first batch rows of the registry with their scores (ZRANGE WITHSCORES).
local function front()
  if only then
    return {only[1], only[2]}
  end
  local members = redis.call('ZRANGE', registry, 0, batch - 1, 'WITHSCORES')
  if #members == 2 and batch > 1 then  -- the whole registry: one row
    only = {members[1], tonumber(members[2]), false}
  end
  return members
end

-- An advance: ZADD, or for the one row, its score kept until the end of the call.
local function move(name, score)
  if only and only[1] == name then
    only[2], only[3] = score, true
  else
    redis.call('ZADD', registry, ms(score), name)
  end
end
local pushed = {}  -- the job ids, pushed once at the end (nothing here reads the wait list)
local out, fired, more = {'', 0}, 0, 0
local read, copied = 0, 0  -- the work bounds' counts

-- One tick at now: each row due at now, at most batch, is enqueued and advanced by the rule.
-- Returns the runs left for their finish, and true when the call's template bytes ran out
-- before the tick's last due row (the next call takes up the tick).
local function one_tick(members)
  local at, released = ms(now), {}
  for i = 1, math.min(#members, 2 * batch), 2 do
    local name, slot = members[i], tonumber(members[i + 1])
    if slot > now then
      break
    end
    if copied >= MAX_BYTES then
      return released, true
    end
    local record = records[name]
    if not record then
      local key = registry .. ':' .. name
      if redis.call('HSTRLEN', key, 'template') > MAX_TEMPLATE_BYTES then
        record = {redis.call('HGET', key, 'every_ms'), false, true}  -- too big: never read
      else
        record = redis.call('HMGET', key, 'every_ms', 'template')
      end
      records[name] = record
    end
    local every_ms, template = record[1], record[2]
    local id, enqueued, advanced = '', -1, 0
    if every_ms then
      if record[3] then
        enqueued = 2  -- refused: no job; the row advances so that it does not hold the front
      else
        local job_id = ids == 'slot' and name .. ':' .. ms(slot) or ''
        enqueued, id = enqueue_one(jobs, job_id, name, at, template or '', pushed)
        if enqueued == 1 then  -- a replayed slot (the job exists) fires nothing new and copies nothing
          fired = fired + 1
          copied = copied + #(template or '') + #name
        end
      end
      local score = next_run(slot, tonumber(every_ms))
      if score then
        move(name, score)
        advanced = 1
      else
        advanced = -1
        released[#released + 1] = {name, tonumber(every_ms)}
      end
    else
      redis.call('ZREM', registry, name)  -- the record is gone: sweep the member
      only = nil
    end
    local n = #out
    out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5], out[n + 6] =
      name, id, ms(slot), at, enqueued, advanced
  end
  return released, false
end

local unpack = unpack or table.unpack  -- Lua 5.1 (the server) or 5.3 (fengari)
for _ = 1, reads do
  if read >= MAX_ROWS then
    more = 1  -- the call's work bound: the next call goes on
    break
  end
  local members = front()
  read = read + #members / 2
  if #members == 0 then
    more = 0  -- nothing is registered: no tick would fire
    break
  end
  local first = tonumber(members[2])
  if first > now then  -- the ticks before it would find nothing due: pass them over (schedule.first_tick_at_or_after)
    now = tick == 0 and first or now + math.ceil((first - now) / tick) * tick
  end
  local released, cut = one_tick(members)
  for _, run in ipairs(released) do  -- the worker finishes the run, then advances the row
    if finish ~= '' then  -- (its record was read just now: Repeat.advance_to's ZADD)
      move(run[1], now + tonumber(finish) + run[2])
    end
  end
  if cut then
    more = 1  -- stopped inside this tick: next_now stays at it
    break
  end
  now = now + tick
  if fired >= want then
    more = 0
    break
  end
  more = 1
end

for from = 1, #pushed, 1000 do  -- LPUSH a b c leaves the list as three LPUSHes would
  redis.call('LPUSH', wait, unpack(pushed, from, math.min(from + 999, #pushed)))
end
if only and only[3] then
  redis.call('ZADD', registry, ms(only[2]), only[1])
end
if minted ~= counted then
  redis.call('SET', counter, ms(minted))
end
out[1], out[2] = ms(now), more
return out
