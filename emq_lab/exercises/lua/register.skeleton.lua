-- register: store a registration once; a live name is left untouched.
-- KEYS[1] registry (ZSET: member = name, score = next run ms)   KEYS[2] record (HASH: every_ms, template)
-- ARGV[1] name   ARGV[2] every_ms   ARGV[3] template   ARGV[4] first_ms (now + first_in_ms)
-- Returns 1 when the name was fresh (write the record and the row), 0 when its record exists (write nothing).
local registry, record = KEYS[1], KEYS[2]
local name, every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- your code here
return 1
