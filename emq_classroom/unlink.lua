#!lua flags=allow-oom,allow-cross-slot-keys
-- unlink: one batch of the class guard freeing every key of one learner's namespace but its
-- progress hash, on one primary, by the admin only (a learner's EVALSHA of it is refused at its
-- SCAN). UNLINK, one call per hash tag (a cluster node refuses keys of several hash slots in one).
-- allow-oom: it runs while the server is past maxmemory, which is when it is needed.
--   KEYS: none (the keys come from SCAN, on this node only).
--   ARGV[1] cursor   SCAN's cursor: "0" to start.
--   ARGV[2] pattern  SCAN MATCH glob of the namespace's keys (keys.namespace_pattern).
--   ARGV[3] count    SCAN COUNT: keys asked for in this batch.
--   ARGV[4] kept     the one key not freed: the namespace's progress hash.
--   Returns {cursor, unlinked}: SCAN's next cursor ("0": done) and the keys this batch freed.
local cursor, pattern, count, kept = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local found = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)
local by_tag, tags = {}, {}
for _, key in ipairs(found[2]) do
  if key ~= kept then
    local open = string.find(key, '{', 1, true)
    local close = open and string.find(key, '}', open + 1, true)
    local tag = (close and close > open + 1) and string.sub(key, open + 1, close - 1) or key
    if by_tag[tag] == nil then
      by_tag[tag] = {}
      tags[#tags + 1] = tag
    end
    table.insert(by_tag[tag], key)
  end
end
local unlinked = 0
for _, tag in ipairs(tags) do
  unlinked = unlinked + redis.call('UNLINK', unpack(by_tag[tag]))
end
return {found[1], unlinked}
