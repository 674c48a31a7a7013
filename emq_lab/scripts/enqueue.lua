-- enqueue: store one occurrence as a job hash and push its id onto the wait list.
--
-- KEYS[1]  job       emq:{q}:job:<job_id>   HASH: id, name, fired_at_ms, template
-- KEYS[2]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- ARGV[1]  job_id    JOB-000001 (fresh ids) or <name>:<slot_ms> (slot-keyed ids)
-- ARGV[2]  name      the registration that produced the occurrence
-- ARGV[3]  fired_at  the pump's "now" for the tick, in milliseconds
-- ARGV[4]  template  the registration's payload template
--
-- Returns
--   1  the job was stored and pushed                                 -> Outcome.ENQUEUED
--   0  a job with this id exists (a replayed slot): nothing written  -> Outcome.DUPLICATE
local job, wait = KEYS[1], KEYS[2]
local job_id, name, fired_at, template = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('EXISTS', job) == 1 then
  return 0
end
redis.call('HSET', job, 'id', job_id, 'name', name, 'fired_at_ms', fired_at, 'template', template)
redis.call('LPUSH', wait, job_id)
return 1
