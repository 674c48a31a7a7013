-- enqueue: store one occurrence as a job hash and push its id onto the wait list.
--
-- KEYS[1]  counter   emq:{q}:id             STRING, the last fresh job number
-- KEYS[2]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- KEYS[3]  jobs      emq:{q}:job:           prefix of the job hashes (HASH: id, name, fired_at_ms,
--                                           template); the job's key is KEYS[3] .. job_id, on the
--                                           same slot as KEYS[1] and KEYS[2] (same hash tag)
-- ARGV[1]  job_id    "" = mint a fresh id JOB-000001 from the counter (INCR, here, after every
--                    check, so a refused call never burns a number); or the slot-keyed id
--                    <name>:<slot_ms>
-- ARGV[2]  name      the registration that produced the occurrence
-- ARGV[3]  fired_at  the pump's "now" for the tick, in milliseconds
-- ARGV[4]  template  the registration's payload template
--
-- Returns {code, job_id}
--   {1, id}  the job was stored and pushed                                 -> Outcome.ENQUEUED
--   {0, id}  a job with this id exists (a replayed slot): nothing written  -> Outcome.DUPLICATE
--   error reply when ARGV is malformed or the KEYS are not one queue's; nothing written
local counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3]
local job_id, name, fired_at, template = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- @include lib/enqueue.lua

local bad = enqueue_keys_error(counter, wait, jobs) or enqueue_args_error(job_id, name, fired_at, template)
if bad then
  return redis.error_reply('ERR emq enqueue: ' .. bad)
end
local code, id = enqueue_one(counter, wait, jobs, job_id, name, fired_at, template)
return {code, id}
