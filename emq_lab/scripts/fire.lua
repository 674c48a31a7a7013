-- fire: the pump's batch in one call. For each row a due read returned, in order and atomically,
-- what enqueue.lua then advance.lua do for it, with the very same functions (lib/enqueue.lua,
-- lib/advance.lua): enqueue one occurrence, then move the row by a compare-and-set.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
--                    (each member's record is KEYS[1] .. ':' .. name, on the same slot)
-- KEYS[2]  counter   emq:{q}:id             STRING, the last fresh job number
-- KEYS[3]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- KEYS[4]  jobs      emq:{q}:job:           prefix of the job hashes; a job's key is KEYS[4] .. job_id
-- ARGV[1]  fired_at  the pump's "now" for the batch, in milliseconds
--
-- Then seven entries per row, row i from ARGV[r] with r = 2 + 7 * (i - 1), i = 1 .. n:
--   ARGV[r]      name        the registration name, as the due read returned it
--   ARGV[r + 1]  what        "both"    enqueue, then advance (a live row)
--                            "enqueue" enqueue only (a live row left for its finish: start-to-finish)
--                            "advance" advance only (the record was gone at the read: a sweep)
--   ARGV[r + 2]  job_id      as enqueue.lua's: "" = mint JOB-000001 from the counter, or <name>:<slot_ms>
--   ARGV[r + 3]  template    the template read in the record
--   ARGV[r + 4]  next_ms     the next run, computed by the host (the pump's rule)
--   ARGV[r + 5]  read_ms     the score the due read returned for the row
--   ARGV[r + 6]  read_every  the every_ms the due read returned ("" when the record was gone)
--   An entry that the row's "what" does not use must be "".
--
-- Returns a flat array, three entries a row, in the rows' order: enqueued, job_id, advanced
--   {1, id, _}   the job was stored and pushed                                -> Outcome.ENQUEUED
--   {0, id, _}   a job with this id exists (a replayed slot): nothing written -> Outcome.DUPLICATE
--   {-1, "", _}  not enqueued ("advance")
--   {_, _, 1}    the row held read_ms and the record read_every: its score is now next_ms
--                                                                             -> Outcome.ADVANCED
--   {_, _, 0}    the record is gone: the dangling member is swept (ZREM)      -> Outcome.ABSENT
--   {_, _, 2}    the row no longer holds read_ms, or the record no longer read_every: nothing
--                written                                                      -> Outcome.MOVED
--   {_, _, -1}   left alone ("enqueue")
--   error reply when the KEYS are not one queue's or any entry of any row is malformed; every
--   row is checked before the first write, so then nothing is written
local registry, counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local fired_at = ARGV[1]
local WIDTH = 7  -- entries per row
-- @include lib/enqueue.lua
-- @include lib/advance.lua

local bad = enqueue_keys_error(counter, wait, jobs)
if not bad and registry ~= wait:sub(1, -6) .. ':repeat' then
  bad = 'KEYS[1] must be the registry of the queue whose wait list is KEYS[3]'
end
if bad then
  return redis.error_reply('ERR emq fire: ' .. bad)
end
if #ARGV < 1 + WIDTH or (#ARGV - 1) % WIDTH ~= 0 then
  return redis.error_reply('ERR emq fire: expected fired_at_ms, then seven entries per row')
end
if not fired_at:match('^%-?%d+$') or #fired_at > 16 then
  return redis.error_reply('ERR emq fire: fired_at_ms must be an integer')
end
local n = math.floor((#ARGV - 1) / WIDTH)

local function row_error(r)
  local name, what, job_id, template = ARGV[r], ARGV[r + 1], ARGV[r + 2], ARGV[r + 3]
  local next_ms, read_ms, read_every = ARGV[r + 4], ARGV[r + 5], ARGV[r + 6]
  if name == '' then
    return 'name must be a non-empty string'
  end
  if what ~= 'both' and what ~= 'enqueue' and what ~= 'advance' then
    return 'what must be "both", "enqueue" or "advance"'
  end
  if what == 'advance' then
    if job_id ~= '' or template ~= '' then
      return 'job_id and template must be "" when the row is only advanced'
    end
  else
    local e = enqueue_args_error(job_id, name, fired_at, template)
    if e then
      return e
    end
  end
  if what == 'enqueue' then
    if next_ms ~= '' or read_ms ~= '' or read_every ~= '' then
      return 'next_ms, read_ms and read_every must be "" when the row is only enqueued'
    end
    return nil
  end
  return advance_args_error(next_ms, read_ms, read_every)
end

for i = 1, n do
  local e = row_error(2 + WIDTH * (i - 1))
  if e then
    return redis.error_reply('ERR emq fire: row ' .. i .. ': ' .. e)
  end
end

local out = {}
for i = 1, n do
  local r = 2 + WIDTH * (i - 1)
  local name, what = ARGV[r], ARGV[r + 1]
  local enqueued, id, advanced = -1, '', -1
  if what ~= 'advance' then
    enqueued, id = enqueue_one(counter, wait, jobs, ARGV[r + 2], name, fired_at, ARGV[r + 3])
  end
  if what ~= 'enqueue' then
    advanced = advance_one(registry, registry .. ':' .. name, name, ARGV[r + 4], ARGV[r + 5], ARGV[r + 6])
  end
  out[#out + 1] = enqueued
  out[#out + 1] = id
  out[#out + 1] = advanced
end
return out
