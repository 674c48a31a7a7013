#!lua flags=no-writes,allow-cross-slot-keys
-- walk: one batch of the class guard's memory walk, on one primary, by the admin only (a
-- learner's EVALSHA of it is refused at its SCAN, which no learner may run).
-- Sizes every key the batch finds (MEMORY USAGE ... SAMPLES 0: every element counted) and sums them
-- per namespace, so 1,000 keys cost the guard one short reply, not 1,000.
--   KEYS: none (the keys come from SCAN, on this node only).
--   ARGV[1] cursor   SCAN's cursor: "0" to start.
--   ARGV[2] pattern  SCAN MATCH glob of the learners' keys (keys.namespaces_pattern).
--   ARGV[3] count    SCAN COUNT: keys asked for in this batch.
--   ARGV[4] big      bytes: a key of this size or more comes back by name.
--   ARGV[5] head     what every key in a namespace starts with ("emq:ns:{"); the namespace runs
--                    from there to the next ":" (as keys.namespace_of reads it).
--   ARGV[6] tail     what follows the namespace in its progress hash's name (":}:progress").
--   Returns {cursor, totals, sized}:
--     cursor  SCAN's next cursor ("0": the walk is over),
--     totals  {namespace, bytes, keys, namespace, bytes, keys, ...}: this batch's keys per namespace,
--     sized   {key, bytes, key, bytes, ...}: the keys of `big` bytes or more, and every progress hash.
--   Each name (namespace or key) in hex, two digits a byte: a learner's key may be any bytes, and
--   the guard's client reads replies as UTF-8.
--   A key gone between SCAN and MEMORY USAGE, or in no namespace, is not counted.
local cursor, pattern, count = ARGV[1], ARGV[2], ARGV[3]
local big, head, tail = tonumber(ARGV[4]), ARGV[5], ARGV[6]

local function hex(name)
  return (string.gsub(name, '.', function(byte) return string.format('%02x', string.byte(byte)) end))
end

local found = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', count)
local start = #head + 1
local bytes, keys, order, sized = {}, {}, {}, {}
for _, key in ipairs(found[2]) do
  local colon = string.sub(key, 1, #head) == head and string.find(key, ':', start, true)
  if colon and colon > start then
    local size = redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')
    if size then
      local namespace = string.sub(key, start, colon - 1)
      if bytes[namespace] == nil then
        bytes[namespace], keys[namespace] = 0, 0
        order[#order + 1] = namespace
      end
      bytes[namespace] = bytes[namespace] + size
      keys[namespace] = keys[namespace] + 1
      if size >= big or key == head .. namespace .. tail then
        sized[#sized + 1] = hex(key)
        sized[#sized + 1] = size
      end
    end
  end
end
local totals = {}
for _, namespace in ipairs(order) do
  totals[#totals + 1] = hex(namespace)
  totals[#totals + 1] = bytes[namespace]
  totals[#totals + 1] = keys[namespace]
end
return {found[1], totals, sized}
