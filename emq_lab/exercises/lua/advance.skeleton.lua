-- advance: move the row of ARGV[1] to ARGV[2], only if the registration is still the one the tick
-- read: the row holds ARGV[3] (the score read) and the record ARGV[4] (the every_ms read).
-- KEYS[1] registry (ZSET: member = name, score = next run ms)   KEYS[2] record (HASH: every_ms, template)
-- ARGV[1] name   ARGV[2] next_ms   ARGV[3] read_ms   ARGV[4] read_every
-- Returns 1 advanced; 0 the record is gone (remove the dangling member); 2 the row or period moved (write nothing).
local registry, record = KEYS[1], KEYS[2]
local name, next_ms, read_ms, read_every = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- your code here
redis.call('ZADD', registry, next_ms, name)
return 1
