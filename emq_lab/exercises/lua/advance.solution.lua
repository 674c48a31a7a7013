-- advance (exercise solution): move a registration's row to its next run, only if the row still
-- holds the run the tick read (compare-and-set); sweep the member of a record that is gone.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
-- ARGV[2]  next_ms   the next run in milliseconds (the host computed it)
-- ARGV[3]  read_ms   the score the tick read for the row
-- (The package's own advance.lua also receives ARGV[4], the period the tick read, and compares
-- it too; the exercise leaves that check out, and its scenarios never need it.)
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
local score = redis.call('ZSCORE', registry, name)
if not score or tonumber(score) ~= tonumber(read_ms) then
  return 2
end
redis.call('ZADD', registry, next_ms, name)
return 1
