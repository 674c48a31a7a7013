-- due: the pump's read. The registrations scored at or before now, in score order, one batch,
-- each with its record, in one call.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
--                    (each member's record is KEYS[1] .. ':' .. name, on the same hash slot)
-- ARGV[1]  now_ms    the tick's "now" in milliseconds
-- ARGV[2]  limit     the most rows to return, an integer from 1 to 5000 (bounds the call's work)
--
-- Returns a flat array, four entries a row: name, score (ms, as text), every_ms, template;
--   every_ms and template are nil when the record is gone (a dangling member, which the
--   advance sweeps). Nothing is written.
--   template is an integer, the stored template's bytes, when that is over MAX_TEMPLATE_BYTES
--   (65536, what register allows; a learner's own HSET can store more): the row is refused (the
--   pump stores no job, then advances it), its template never read (HSTRLEN first).
--   Fewer than limit rows when their names and templates pass MAX_REPLY_BYTES (1 MiB): the
--   rows stop after the one that passes it (so at least one row when any is due). A reply stays
--   about 1 MiB whatever a learner stores, and so does the time it holds the server; the rows
--   left are still due, and the next call (the pump's next tick, a drain's next read) takes them.
--   error reply when now_ms or limit is not an integer in its range
local registry = KEYS[1]
local now_ms, limit = ARGV[1], ARGV[2]
local MAX_DUE = 5000  -- as scripts/__init__.py
local MAX_REPLY_BYTES = 1048576  -- a reply stops adding rows past this
local MAX_TEMPLATE_BYTES = 65536  -- as validate.py and register.lua

if type(now_ms) ~= 'string' or not now_ms:match('^%-?%d+$') or #now_ms > 16 then
  return redis.error_reply('ERR emq due: now_ms must be an integer')
end
if type(limit) ~= 'string' or not limit:match('^[1-9]%d*$') or #limit > 5 or tonumber(limit) > MAX_DUE then
  return redis.error_reply('ERR emq due: limit must be an integer from 1 to ' .. MAX_DUE)
end

local members = redis.call('ZRANGEBYSCORE', registry, '-inf', now_ms, 'WITHSCORES', 'LIMIT', 0, limit)
local out = {}
local bytes = 0
for i = 1, #members, 2 do
  if bytes > MAX_REPLY_BYTES then
    break
  end
  local name = members[i]
  local record = registry .. ':' .. name
  local size = redis.call('HSTRLEN', record, 'template')
  local fields
  if size > MAX_TEMPLATE_BYTES then
    fields = {redis.call('HGET', record, 'every_ms'), size}
  else
    fields = redis.call('HMGET', record, 'every_ms', 'template')
  end
  out[#out + 1] = name
  out[#out + 1] = members[i + 1]
  out[#out + 1] = fields[1]
  out[#out + 1] = fields[2]
  bytes = bytes + #name + (type(fields[2]) == 'string' and #fields[2] or 0)
end
return out
