-- upsert: register or rewrite a name's single row, BullMQ style (a contrast, not a verb).
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
-- KEYS[2]  record    emq:{q}:repeat:<name>  HASH: every_ms, template (rewritten each call)
-- KEYS[3]  delayed   emq:{q}:delayed        ZSET of pending occurrences, score = run (ms)
-- ARGV[1]  name      the registration name (the registry member)
-- ARGV[2]  every_ms  the period in milliseconds, a positive integer
-- ARGV[3]  template  the payload template, stored verbatim
-- ARGV[4]  next_ms   the next-run score in milliseconds (host: now + first_in_ms)
--
-- ZSCORE probes the prior score; when there is one, the pending occurrence the previous call
-- queued (repeat:<name>:<prev_ms>) is removed before the same member is stored again.
--
-- Returns
--   1  the name was fresh: record, row and pending occurrence written      -> {:ok, :registered}
--   0  the name was live: stale occurrence removed, row and record rewritten -> {:ok, :updated}
--   error reply when ARGV is malformed; nothing written
local registry, record, delayed = KEYS[1], KEYS[2], KEYS[3]
local name, every_ms, template, next_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])

if not every_ms or every_ms < 1 or every_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq upsert: every_ms must be a positive integer')
end
if not next_ms or next_ms % 1 ~= 0 then
  return redis.error_reply('ERR emq upsert: next_ms must be an integer')
end
local prev_ms = redis.call('ZSCORE', registry, name)
if prev_ms then
  redis.call('ZREM', delayed, 'repeat:' .. name .. ':' .. string.format('%.0f', tonumber(prev_ms)))
end
redis.call('HSET', record, 'every_ms', ARGV[2], 'template', template)
redis.call('ZADD', registry, next_ms, name)
redis.call('ZADD', delayed, next_ms, 'repeat:' .. name .. ':' .. string.format('%.0f', next_ms))
if prev_ms then
  return 0
end
return 1
