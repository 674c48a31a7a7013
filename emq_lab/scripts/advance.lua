-- advance: move a registration's single registry row to its next run.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
-- ARGV[2]  next_ms   the next run in milliseconds, computed by the host (now + every_ms)
--
-- Returns
--   1  the record exists: the row's score is rewritten to next_ms  -> Outcome.ADVANCED
--   0  the record is gone: the dangling member is swept (ZREM)     -> Outcome.ABSENT
--   error reply when next_ms is not an integer or ARGV[1] does not name KEYS[2]'s record; nothing written
local registry, record = KEYS[1], KEYS[2]
local name, next_text = ARGV[1], ARGV[2]

if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq advance: ARGV[1] must be the name whose record is KEYS[2]')
end
if redis.call('EXISTS', record) == 0 then
  redis.call('ZREM', registry, name)
  return 0
end
if type(next_text) ~= 'string' or not next_text:match('^%-?%d+$') or #next_text > 16 then
  return redis.error_reply('ERR emq advance: next_ms must be an integer')
end
redis.call('ZADD', registry, tonumber(next_text), name)
return 1
