-- enqueue: store one occurrence as a job hash and push its id onto the wait list.
--
-- KEYS[1]  counter   emq:{q}:id             STRING, the last fresh job number
-- KEYS[2]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- KEYS[3]  jobs      emq:{q}:job:           prefix of the job hashes (HASH: id, name, fired_at_ms,
--                                           template); the job's key is KEYS[3] .. job_id, on the
--                                           same hash slot as KEYS[1] and KEYS[2] (same hash tag)
-- ARGV[1]  job_id    "" = mint a fresh id JOB-000001 from the counter (INCR, here, after every
--                    check, so a refused call never burns a number); or the slot-keyed id
--                    <name>:<slot_ms>
-- ARGV[2]  name      the registration that produced the occurrence
-- ARGV[3]  fired_at_ms  the pump's "now" for the tick, in milliseconds
-- ARGV[4]  template  the registration's payload template, at most 65536 bytes
--
-- Returns {code, job_id}
--   {1, id}  the job was stored and pushed                                 -> Outcome.ENQUEUED
--   {0, id}  a job with this id exists (a replayed slot): nothing written  -> Outcome.DUPLICATE
--   error reply when ARGV is malformed or the KEYS are not one queue's; nothing written
local counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3]
local job_id, name, fired_at_ms, template = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local tag = wait:sub(1, -6)  -- emq:{q} of <tag>:wait
local bad
if wait:sub(-5) ~= ':wait' or counter ~= tag .. ':id' or jobs ~= tag .. ':job:' then
  bad = 'KEYS must be one queue\'s counter, wait list and job prefix'
elseif type(name) ~= 'string' or name == '' then
  bad = 'name must be a non-empty string'
elseif type(fired_at_ms) ~= 'string' or not fired_at_ms:match('^%-?%d+$') or #fired_at_ms > 16 then
  bad = 'fired_at_ms must be an integer'
elseif type(template) ~= 'string' or #template > 65536 then
  bad = 'template must be text of at most 65536 bytes'
elseif type(job_id) ~= 'string' or (job_id ~= ''
    and (job_id:sub(1, #name + 1) ~= name .. ':' or not job_id:sub(#name + 2):match('^%-?%d+$'))) then
  bad = 'job_id must be empty (mint one) or <name>:<slot_ms>'
end
if bad then
  return redis.error_reply('ERR emq enqueue: ' .. bad)
end

if job_id == '' then
  job_id = string.format('JOB-%06d', redis.call('INCR', counter))
end
local job = jobs .. job_id
if redis.call('EXISTS', job) == 1 then
  return {0, job_id}  -- a replayed slot: the job is there already
end
redis.call('HSET', job, 'id', job_id, 'name', name, 'fired_at_ms', fired_at_ms, 'template', template)
redis.call('LPUSH', wait, job_id)
return {1, job_id}
