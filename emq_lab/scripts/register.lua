-- register: store a recurring registration once; a live name is left untouched.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the first-run score in milliseconds (host: now + first_in_ms)
--
-- Returns
--   1  the name was fresh: record and registry row written      -> Outcome.REGISTERED
--   0  the record exists: nothing written                       -> Outcome.EXISTS
--   error reply when ARGV is malformed; nothing written
local registry, record = KEYS[1], KEYS[2]
local name, every_ms, template, first_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])

if redis.call('EXISTS', record) == 1 then
  return 0
end
if not every_ms or every_ms < 1 or every_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq register: every_ms must be a positive integer')
end
if not first_ms or first_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq register: first_ms must be an integer')
end
redis.call('HSET', record, 'every_ms', ARGV[2], 'template', template)
redis.call('ZADD', registry, first_ms, name)
return 1
