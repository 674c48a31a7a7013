-- upsert: register or rewrite a name's single row, BullMQ style (a contrast, not a verb).
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (rewritten each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  next_ms   the next-run score in milliseconds (host: now + first_in_ms)
--
-- ZSCORE probes the prior score; when there is one, the pending occurrence the previous call
-- queued (repeat:<name>:<prev_ms>) is removed before the same member is stored again.
--
-- Returns
--   1  the name was fresh: record, row and pending occurrence written      -> {:ok, :registered}
--   0  the name was live: stale occurrence removed, row and record rewritten -> {:ok, :updated}
--   error reply when ARGV is malformed or ARGV[1] does not name KEYS[2]'s record (the same
--   checks as register.lua, before any write); nothing written
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every, template, first = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local MAX_EVERY_MS = '315360000000'  -- ten years of 365 days, as register.lua

if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq upsert: ARGV[1] must be the name whose record is KEYS[2]')
end
if type(every) ~= 'string' or not every:match('^[1-9]%d*$')
    or #every > #MAX_EVERY_MS or (#every == #MAX_EVERY_MS and every > MAX_EVERY_MS) then
  return redis.error_reply('ERR emq upsert: every_ms must be an integer from 1 to ' .. MAX_EVERY_MS)
end
if type(template) ~= 'string' then
  return redis.error_reply('ERR emq upsert: template is missing')
end
if type(first) ~= 'string' or not first:match('^%-?%d+$') or #first > 16 then
  return redis.error_reply('ERR emq upsert: next_ms must be an integer')
end
local first_n = tonumber(first)
local prev_ms = redis.call('ZSCORE', registry, name)
if prev_ms then
  redis.call('ZREM', delayed, 'repeat:' .. name .. ':' .. string.format('%.0f', tonumber(prev_ms)))
end
redis.call('HSET', record, 'every_ms', every, 'template', template)
redis.call('ZADD', registry, first_n, name)
redis.call('ZADD', delayed, first_n, 'repeat:' .. name .. ':' .. string.format('%.0f', first_n))
if prev_ms then
  return 0
end
return 1
