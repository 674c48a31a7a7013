-- upsert: register or rewrite a name's single row, BullMQ style. A contrast, not a verb: it
-- exists to be read beside register.lua (which leaves a live name alone) and naive.lua, so it
-- keeps only the lines that differ; the lab calls it with arguments validate.py has checked.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (rewritten each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  first_ms  the next-run score in milliseconds (host: now + first_in_ms)
--
-- ZSCORE probes the prior score; when there is one, the pending occurrence the previous call
-- queued (repeat:<name>:<prev_ms>) is removed before the same member is stored again.
--
-- Returns
--   1  the name was fresh: record, row and pending occurrence written      -> {:ok, :registered}
--   0  the name was live: stale occurrence removed, row and record rewritten -> {:ok, :updated}
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every_ms, template, first_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
first_ms = tonumber(first_ms)
local prev_ms = redis.call('ZSCORE', registry, name)
if prev_ms then
  redis.call('ZREM', delayed, 'repeat:' .. name .. ':' .. string.format('%.0f', tonumber(prev_ms)))
end
redis.call('HSET', record, 'every_ms', every_ms, 'template', template)
redis.call('ZADD', registry, first_ms, name)
redis.call('ZADD', delayed, first_ms, 'repeat:' .. name .. ':' .. string.format('%.0f', first_ms))
if prev_ms then
  return 0
end
return 1
