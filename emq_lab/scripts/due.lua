-- due: the pump's read. The registrations scored at or before now, in score order, one batch,
-- each with its record, in one call.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
--                    (each member's record is KEYS[1] .. ':' .. name, on the same slot)
-- ARGV[1]  now_ms    the tick's "now" in milliseconds
-- ARGV[2]  limit     the most rows to return, an integer from 1 to 5000 (bounds the call's work)
--
-- Returns a flat array, four entries a row: name, score (ms, as text), every_ms, template;
--   every_ms and template are nil when the record is gone (a dangling member, which the
--   advance sweeps). Nothing is written.
--   error reply when now_ms or limit is not an integer in its range
local registry = KEYS[1]
local now_ms, limit = ARGV[1], ARGV[2]
local MAX_DUE = 5000  -- as scripts/__init__.py

if type(now_ms) ~= 'string' or not now_ms:match('^%-?%d+$') or #now_ms > 16 then
  return redis.error_reply('ERR emq due: now_ms must be an integer')
end
if type(limit) ~= 'string' or not limit:match('^[1-9]%d*$') or #limit > 5 or tonumber(limit) > MAX_DUE then
  return redis.error_reply('ERR emq due: limit must be an integer from 1 to ' .. MAX_DUE)
end

local members = redis.call('ZRANGEBYSCORE', registry, '-inf', now_ms, 'WITHSCORES', 'LIMIT', 0, limit)
local out = {}
for i = 1, #members, 2 do
  local name = members[i]
  local fields = redis.call('HMGET', registry .. ':' .. name, 'every_ms', 'template')
  out[#out + 1] = name
  out[#out + 1] = members[i + 1]
  out[#out + 1] = fields[1]
  out[#out + 1] = fields[2]
end
return out
