-- advance (the "fix the bug" exercise): the course page's @advance (repeat.ex), as the page
-- prints it. It is correct for the page: the record check sweeps a name cancelled mid-tick.
-- It has no compare-and-set, which this lab adds (the course pages do not): a name cancelled
-- and registered again between the tick's read and this advance gets its new first run
-- overwritten. The exercise: add that check and its reply 2 (moved); skeleton("advance")
-- lists the two extra arguments this lab's tick passes.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template
-- ARGV[1]  name      the registration name
-- ARGV[2]  next_ms   the next run in milliseconds (the host computed it: now + every_ms)
--
-- Returns
--   1  the record exists: the row's score is now next_ms   -> advanced
--   0  the record is gone: the dangling member is removed  -> absent
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])           -- cancelled mid-tick → sweep, {:ok, :absent}
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])  -- ARGV[2] = now_ms() + every_ms
return 1                                    -- {:ok, :advanced}
