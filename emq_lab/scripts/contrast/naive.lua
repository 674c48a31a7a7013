-- naive: a register that writes without reading first. A contrast, not a verb: it exists to be
-- read beside register.lua and upsert.lua, so it keeps only the lines that differ; the lab calls
-- it with arguments validate.py has checked.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = row id, score = first run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (written each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the first-run score in milliseconds (host: now + first_in_ms)
--
-- Each call writes four things: the name's record; a registry row whose id is
-- <name>:<first_ms>, scored first_ms; that row's own record, KEYS[1] .. ':' .. <row id> (HASH:
-- every_ms, template, on KEYS[1]'s hash slot as it carries the same hash tag; it is the key the
-- pump's due read looks up for a member); and a pending occurrence repeat:<name>:<first_ms>.
--
-- Returns
--   1  always: the writes above were made  -> {:ok, :registered}
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
first_ms = tonumber(first_ms)
local stamp = string.format('%.0f', first_ms)
local row = name .. ':' .. stamp
redis.call('HSET', record, 'every_ms', every_ms, 'template', template)
redis.call('ZADD', registry, first_ms, row)
redis.call('HSET', registry .. ':' .. row, 'every_ms', every_ms, 'template', template)
redis.call('ZADD', delayed, first_ms, 'repeat:' .. row)
return 1
