-- advance (the "fix the bug" exercise): meant to move a row to its next run only if the row
-- still holds the run the tick read, but it has a bug.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
-- ARGV[2]  next_ms   the next run in milliseconds (the host computed it)
-- ARGV[3]  read_ms   the score the tick read for the row
--
-- Returns
--   1  the record exists and the row held read_ms: its score is now next_ms   -> advanced
--   0  the record is gone: the dangling member is removed                     -> absent
--   2  the record exists but the row no longer holds read_ms: nothing written -> moved
local registry, record = KEYS[1], KEYS[2]
local name, next_ms, read_ms = ARGV[1], ARGV[2], ARGV[3]

if redis.call('EXISTS', record) == 0 then
  redis.call('ZREM', registry, name)
  return 0
end
redis.call('ZADD', registry, next_ms, name)
return 1
