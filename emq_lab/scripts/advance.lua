-- advance: move a registration's single registry row to its next run, only if it is still the
-- registration the caller read: same score, same period (a compare-and-set).
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
-- ARGV[2]  next_ms   the next run in milliseconds, computed by the host (e.g. now + every_ms)
-- ARGV[3]  read_ms   the score the caller read for the row (the tick's due read); "" = no check
-- ARGV[4]  read_every  the every_ms the caller read in the record; "" (or absent) = no check. With read_ms it
--                    tells a registration made anew at the same score but another period
--                    (whose next run the caller's next_ms, computed from the old one, would spoil)
--
-- Returns
--   1  the record exists and the row held read_ms: its score is now next_ms   -> Outcome.ADVANCED
--   0  the record is gone: the dangling member is swept (ZREM)                -> Outcome.ABSENT
--   2  the record exists but the row no longer holds read_ms, or the record no
--      longer holds read_every (cancelled and registered again, or moved by
--      someone else): nothing written                                         -> Outcome.MOVED
--   error reply when next_ms or read_ms is not an integer, read_every is not a period in ms, or
--   ARGV[1] does not name KEYS[2]'s record; nothing written
local registry, record = KEYS[1], KEYS[2]
local name, next_ms, read_ms, read_every = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local function integer(text)
  return type(text) == 'string' and text:match('^%-?%d+$') ~= nil and #text <= 16
end
if type(name) ~= 'string' or record ~= registry .. ':' .. name then
  return redis.error_reply('ERR emq advance: ARGV[1] must be the name whose record is KEYS[2]')
elseif not integer(next_ms) then
  return redis.error_reply('ERR emq advance: next_ms must be an integer')
elseif read_ms ~= '' and not integer(read_ms) then
  return redis.error_reply('ERR emq advance: read_ms must be an integer or empty')
elseif read_every ~= nil and read_every ~= '' and not tostring(read_every):match('^[1-9]%d*$') then
  return redis.error_reply('ERR emq advance: read_every must be a period in ms or empty')
end

if redis.call('EXISTS', record) == 0 then
  redis.call('ZREM', registry, name)  -- a dangling member: sweep it
  return 0
end
if read_ms ~= '' then
  local score = redis.call('ZSCORE', registry, name)
  if not score or tonumber(score) ~= tonumber(read_ms) then
    return 2
  end
end
if read_every and read_every ~= '' and redis.call('HGET', record, 'every_ms') ~= read_every then
  return 2
end
redis.call('ZADD', registry, next_ms, name)
return 1
