-- advance (exercise solution): move a registration's row to its next run, only if it is still the
-- registration the tick read: same score, same period (compare-and-set); sweep the member of a
-- record that is gone.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name        the registration name
-- ARGV[2]  next_ms     the next run in milliseconds (the host computed it)
-- ARGV[3]  read_ms     the score the tick read for the row; "" = no check
-- ARGV[4]  read_every  the every_ms the tick read in the record; "" = no check
--          (rep.advance(name, every_ms) reads nothing: it sends both ""; with read_ms= it sends ARGV[3])
--
-- Returns
--   1  the row held read_ms and the record read_every (each "" skips its check):
--      its score is now next_ms                                                 -> advanced
--   0  the record is gone: the dangling member is removed                       -> absent
--   2  the record exists but the row or the period is not what the tick read
--      (cancelled and registered again): nothing written                        -> moved
local registry, record = KEYS[1], KEYS[2]
local name, next_ms, read_ms, read_every = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('EXISTS', record) == 0 then
  redis.call('ZREM', registry, name)
  return 0
end
local score = redis.call('ZSCORE', registry, name)
local every = redis.call('HGET', record, 'every_ms')
if read_ms ~= '' and (not score or tonumber(score) ~= tonumber(read_ms)) then
  return 2
end
if read_every ~= '' and every ~= read_every then
  return 2
end
redis.call('ZADD', registry, next_ms, name)
return 1
