-- register_many: register.lua for a batch of names that share one period, template and first
-- run, in one call. Each name gets its own guard: a live record answers 0 and is left
-- untouched; a fresh name gets its record and its registry row.
--
-- KEYS[1]      registry  emq:{q}:repeat             ZSET, member = name, score = next run (ms)
-- KEYS[1 + i]  record    emq:{q}:repeat:<name_i>    HASH: every_ms, template; i = 1 .. n, n <= 1000
-- ARGV[1]      every_ms  the period in milliseconds, an integer from 1 to ten years
-- ARGV[2]      template  the payload template, stored verbatim, at most 65536 bytes; n times its
--                        size at most 4 MiB (one call's writes stay small)
-- ARGV[3]      first_ms  the first-run score in milliseconds (host: now + first_in_ms)
-- ARGV[3 + i]  name_i    the registration name whose record is KEYS[1 + i]
--
-- Returns an array of n integers, one per name, in order:
--   1  the name was fresh: record and registry row written      -> Outcome.REGISTERED
--   0  the record exists: nothing written for it                -> Outcome.EXISTS
--   (a name twice in one call: the first answers 1, the second 0, as two register calls would)
--   error reply when ARGV is malformed or a name is not the one whose record KEYS holds;
--   everything is checked before the first write, so then nothing is written.
local registry = KEYS[1]
local every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3]
local n = #KEYS - 1
local MAX_EVERY_MS = '315360000000'  -- ten years of 365 days, as validate.py (text: exact in any Lua)
local MAX_MANY, MAX_TEMPLATE, MAX_BYTES = 1000, 65536, 4 * 1024 * 1024  -- as scripts/__init__.py

if n < 1 or #ARGV ~= 3 + n then
  return redis.error_reply('ERR emq register_many: expected every_ms, template, first_ms and one name per record')
end
if n > MAX_MANY then
  return redis.error_reply('ERR emq register_many: at most ' .. MAX_MANY .. ' names (KEYS) a call')
end
if #template > MAX_TEMPLATE or n * #template > MAX_BYTES then
  return redis.error_reply('ERR emq register_many: template must be at most ' .. MAX_TEMPLATE
    .. ' bytes, and the names times its size at most ' .. MAX_BYTES)
end
if not every_ms:match('^[1-9]%d*$') or #every_ms > #MAX_EVERY_MS or (#every_ms == #MAX_EVERY_MS and every_ms > MAX_EVERY_MS) then
  return redis.error_reply('ERR emq register_many: every_ms must be an integer from 1 to ' .. MAX_EVERY_MS)
end
if not first_ms:match('^%-?%d+$') or #first_ms > 16 then
  return redis.error_reply('ERR emq register_many: first_ms must be an integer')
end
for i = 1, n do
  if KEYS[1 + i] ~= registry .. ':' .. ARGV[3 + i] then
    return redis.error_reply('ERR emq register_many: ARGV[' .. (3 + i) .. '] must be the name whose record is KEYS[' .. (1 + i) .. ']')
  end
end

first_ms = tonumber(first_ms)  -- checked: now the score as a number
local replies = {}
for i = 1, n do
  local record = KEYS[1 + i]
  if redis.call('EXISTS', record) == 1 then
    replies[i] = 0
  else
    redis.call('HSET', record, 'every_ms', every_ms, 'template', template)
    redis.call('ZADD', registry, first_ms, ARGV[3 + i])
    replies[i] = 1
  end
end
return replies
