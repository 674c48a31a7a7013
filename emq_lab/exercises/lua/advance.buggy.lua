-- advance without the compare-and-set: it sweeps a member whose record is gone, and otherwise
-- writes the next run whatever happened to the row since the tick read it. A name cancelled and
-- registered anew between the tick's read and this advance gets its new first run overwritten.
-- The fix: compare the row's score with ARGV[3] and the record's every_ms with ARGV[4] before
-- the ZADD (each unless it is "": no check); on a difference write nothing and answer 2 (moved).
--
-- KEYS[1]  registry    emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record      emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name        the registration name
-- ARGV[2]  next_ms     the next run in milliseconds (the host computed it: now + every_ms)
-- ARGV[3]  read_ms     the score the tick read for the row; "" = no check (unused here: the bug)
-- ARGV[4]  read_every  the every_ms the tick read in the record; "" = no check (unused here: the bug)
--
-- Returns
--   1  the record exists: the row's score is now next_ms   -> advanced
--   0  the record is gone: the dangling member is removed  -> absent
local registry, record = KEYS[1], KEYS[2]
local name, next_ms = ARGV[1], ARGV[2]

if redis.call('EXISTS', record) == 0 then
  redis.call('ZREM', registry, name)
  return 0
end
redis.call('ZADD', registry, next_ms, name)
return 1
