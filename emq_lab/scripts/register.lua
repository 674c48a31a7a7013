-- register: store a recurring registration once; a live name is left untouched.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds, an integer from 1 to ten years
-- ARGV[3]  template  the payload template, stored verbatim, at most 65536 bytes
-- ARGV[4]  first_ms  the first-run score in milliseconds (host: now + first_in_ms)
--
-- Returns
--   1  the name was fresh: record and registry row written      -> Outcome.REGISTERED
--   0  the record exists: nothing written                       -> Outcome.EXISTS
--   error reply when ARGV is malformed or ARGV[1] does not name KEYS[2]'s record; nothing
--   written. ARGV is checked before the guard, so a malformed call on a live name is an error.
local registry, record = KEYS[1], KEYS[2]
local name, every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local MAX_EVERY_MS = '315360000000'  -- ten years of 365 days, as validate.py (text: exact in any Lua)

if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq register: ARGV[1] must be the name whose record is KEYS[2]')
end
if type(every_ms) ~= 'string' or not every_ms:match('^[1-9]%d*$')
    or #every_ms > #MAX_EVERY_MS or (#every_ms == #MAX_EVERY_MS and every_ms > MAX_EVERY_MS) then
  return redis.error_reply('ERR emq register: every_ms must be an integer from 1 to ' .. MAX_EVERY_MS)
end
if type(template) ~= 'string' or #template > 65536 then
  return redis.error_reply('ERR emq register: template must be text of at most 65536 bytes')
end
if type(first_ms) ~= 'string' or not first_ms:match('^%-?%d+$') or #first_ms > 16 then
  return redis.error_reply('ERR emq register: first_ms must be an integer')
end
first_ms = tonumber(first_ms)  -- checked: now the score as a number

if redis.call('EXISTS', record) == 1 then
  return 0
end
redis.call('HSET', record, 'every_ms', every_ms, 'template', template)
redis.call('ZADD', registry, first_ms, name)
return 1
