-- naive: append a registration row on every call, never looking first (a contrast, not a verb).
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = row id, score = first run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (overwritten each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the first-run score in milliseconds (host: now + first_in_ms)
--
-- The row id is <name>:<first_ms>, so every boot that computes a new first run adds a row.
-- Each row gets a record of its own, KEYS[1] .. ':' .. <row id> (HASH: every_ms, template; the
-- key the pump's due read looks up for a member, on KEYS[1]'s slot since it carries the same
-- hash tag), so the pump fires every row it finds; and each row queues its own pending
-- occurrence repeat:<name>:<first_ms>.
--
-- Returns
--   1  always: a row was appended, even for a live name (the bug)  -> {:ok, :registered}
--   error reply when ARGV is malformed or ARGV[1] does not name KEYS[2]'s record (the same
--   checks as register.lua, before any write); nothing written
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every, template, first = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local MAX_EVERY_MS = '315360000000'  -- ten years of 365 days, as register.lua

if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq naive: ARGV[1] must be the name whose record is KEYS[2]')
end
if type(every) ~= 'string' or not every:match('^[1-9]%d*$')
    or #every > #MAX_EVERY_MS or (#every == #MAX_EVERY_MS and every > MAX_EVERY_MS) then
  return redis.error_reply('ERR emq naive: every_ms must be an integer from 1 to ' .. MAX_EVERY_MS)
end
if type(template) ~= 'string' then
  return redis.error_reply('ERR emq naive: template is missing')
end
if type(first) ~= 'string' or not first:match('^%-?%d+$') or #first > 16 then
  return redis.error_reply('ERR emq naive: first_ms must be an integer')
end
local first_n = tonumber(first)
local stamp = string.format('%.0f', first_n)
local row = name .. ':' .. stamp
redis.call('HSET', record, 'every_ms', every, 'template', template)
redis.call('ZADD', registry, first_n, row)
redis.call('HSET', registry .. ':' .. row, 'every_ms', every, 'template', template)
redis.call('ZADD', delayed, first_n, 'repeat:' .. row)
return 1
