-- register (exercise solution): store a registration once; a live name is left untouched.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the first-run score in milliseconds (the host computed now + first_in_ms)
--
-- Returns
--   1  the name was fresh: record and registry row written   -> registered
--   0  the record exists: nothing written                    -> exists
local registry, record = KEYS[1], KEYS[2]
local name, every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('EXISTS', record) == 1 then
  return 0
end
redis.call('HSET', record, 'every_ms', every_ms, 'template', template)
redis.call('ZADD', registry, first_ms, name)
return 1
