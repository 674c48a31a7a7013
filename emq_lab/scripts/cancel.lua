-- cancel: remove a registration; afterwards the name registers as fresh.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
--
-- Returns
--   1  a registry row or a record was removed   -> Outcome.CANCELLED
--   0  neither existed: nothing to remove       -> Outcome.ABSENT
--   error reply when ARGV[1] does not name KEYS[2]'s record; nothing written
local registry, record = KEYS[1], KEYS[2]
local name = ARGV[1]

if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq cancel: ARGV[1] must be the name whose record is KEYS[2]')
end

local removed = redis.call('ZREM', registry, name) + redis.call('DEL', record)
if removed > 0 then
  return 1
end
return 0
