-- naive: append a registration row on every call, never looking first (a contrast, not a verb).
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = row id, score = first run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (overwritten each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the first-run score in milliseconds (host: now + first_in_ms)
--
-- The row id is <name>:<first_ms>, so every boot that computes a new first run adds a row,
-- and each row queues its own pending occurrence repeat:<name>:<first_ms>.
--
-- Returns
--   1  always: a row was appended, even for a live name (the bug)  -> {:ok, :registered}
--   error reply when ARGV is malformed; nothing written
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every_ms, template, first_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])

if not every_ms or every_ms < 1 or every_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq naive: every_ms must be a positive integer')
end
if not first_ms or first_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq naive: first_ms must be an integer')
end
local stamp = string.format('%.0f', first_ms)
redis.call('HSET', record, 'every_ms', ARGV[2], 'template', template)
redis.call('ZADD', registry, first_ms, name .. ':' .. stamp)
redis.call('ZADD', delayed, first_ms, 'repeat:' .. name .. ':' .. stamp)
return 1
