-- advance: move the row of ARGV[1] to its next run, ARGV[2]; the tick calls it after its enqueue.
-- KEYS[1] registry (ZSET: member = name, score = next run ms)   KEYS[2] record (HASH: every_ms, template)
-- ARGV[1] name   ARGV[2] next_ms   ARGV[3] read_ms (the score the tick read)   ARGV[4] read_every (its every_ms)
--   ARGV[3] and ARGV[4] may be "": no check. rep.advance(name, every_ms) read nothing: it sends both "".
-- Returns 1 advanced; 0 the record is gone and the member was swept; 2 (the stretch) moved, nothing written.
--
-- The exercise: the sweep. A cancel split into two commands (DEL the record, then ZREM the member)
-- can land its DEL before this advance and its ZREM after: the tick then advances a member whose
-- record is gone. As written below, the script gives that member a next run, and the registry keeps
-- a member with no record. Check the record first: gone -> remove the member, answer 0.
-- The stretch: the compare-and-set. Before the ZADD, answer 2 and write nothing when the row no
-- longer holds read_ms or the record no longer holds read_every (cancelled and registered anew);
-- skip each compare whose ARGV is "" (tonumber('') is nil: compared, it would answer 2 every time).
local registry, record = KEYS[1], KEYS[2]
local name, next_ms, read_ms, read_every = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- your code here: the sweep (and, as a stretch, the compare-and-set)
redis.call('ZADD', registry, next_ms, name)
return 1
