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
-- ARGV[2]  ids       "fresh" = mint JOB-000001 from the counter for each occurrence (INCR, after
--                    every check); "slot" = the slot-keyed id <name>:<read_ms>
--
-- Then five entries a row: the row as due.lua returned it, and its next run. Row i starts at
-- ARGV[r], r = 3 + 5 * (i - 1), i = 1 .. n:
--   ARGV[r]      name        the registration name
--   ARGV[r + 1]  read_ms     the score the due read returned (the slot that fires)
--   ARGV[r + 2]  read_every  the every_ms the due read returned; "" = the record was gone: no
--                            occurrence, and the advance sweeps the member
--   ARGV[r + 3]  template    the template the due read returned ("" when the record was gone)
--   ARGV[r + 4]  next_ms     the next run, computed by the host (the pump's rule); "" = leave the
--                            row for its finish (start-to-finish): an occurrence, no advance
--
-- Returns {codes, id_1, ..., id_n}: codes has two characters a row, then each row's job id
-- ("" when it enqueued nothing). A row's first character is the enqueue's, the second the advance's:
--   "1?"  the job was stored and pushed                                -> Outcome.ENQUEUED
--   "0?"  a job with this id exists (a replayed slot): nothing written -> Outcome.DUPLICATE
--   "-?"  no occurrence (the record was gone at the read)
--   "?1"  the row held read_ms and the record read_every: its score is now next_ms
--                                                                     -> Outcome.ADVANCED
--   "?0"  the record is gone: the dangling member is swept (ZREM)      -> Outcome.ABSENT
--   "?2"  the row no longer holds read_ms, or the record no longer read_every: nothing
--         written                                                      -> Outcome.MOVED
--   "?-"  left alone (next_ms "")
--   error reply when the KEYS are not one queue's or any entry of any row is malformed; every
--   row is checked before the first write, so then nothing is written
local registry, counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local fired_at, ids = ARGV[1], ARGV[2]
local WIDTH = 5  -- entries a row
-- @include lib/enqueue.lua
-- @include lib/advance.lua

local bad = enqueue_keys_error(counter, wait, jobs)
if not bad and registry ~= wait:sub(1, -6) .. ':repeat' then
  bad = 'KEYS[1] must be the registry of the queue whose wait list is KEYS[3]'
end
if not bad and (#ARGV < 2 + WIDTH or (#ARGV - 2) % WIDTH ~= 0) then
  bad = 'expected fired_at_ms, ids, then five entries a row'
end
if not bad and ids ~= 'fresh' and ids ~= 'slot' then
  bad = 'ids must be "fresh" or "slot"'
end
if bad then
  return redis.error_reply('ERR emq fire: ' .. bad)
end
local n = math.floor((#ARGV - 2) / WIDTH)

-- The job id that enqueue.lua's ARGV[1] would hold for the row at r.
local function job_id_of(r)
  if ids == 'slot' then
    return ARGV[r] .. ':' .. ARGV[r + 1]
  end
  return ''
end

-- The error text when the row at r is malformed; nil when it is well formed.
local function row_error(r)
  local name, read_ms, read_every, template, next_ms = ARGV[r], ARGV[r + 1], ARGV[r + 2], ARGV[r + 3], ARGV[r + 4]
  if read_every == '' then
    if template ~= '' or next_ms == '' then
      return 'a row whose record was gone has template "" and a next_ms (its advance sweeps it)'
    end
  else
    local e = enqueue_args_error(job_id_of(r), name, fired_at, template)
    if e then
      return e
    end
  end
  if name == '' then
    return 'name must be a non-empty string'
  end
  if read_ms == '' then
    return 'read_ms must be an integer'
  end
  if next_ms == '' then
    return advance_args_error('0', read_ms, read_every)  -- left alone: the read is still checked
  end
  return advance_args_error(next_ms, read_ms, read_every)
end

for i = 1, n do
  local e = row_error(3 + WIDTH * (i - 1))
  if e then
    return redis.error_reply('ERR emq fire: row ' .. i .. ': ' .. e)
  end
end

local codes, out = {}, {''}
for i = 1, n do
  local r = 3 + WIDTH * (i - 1)
  local name, read_ms, read_every, template, next_ms = ARGV[r], ARGV[r + 1], ARGV[r + 2], ARGV[r + 3], ARGV[r + 4]
  local enqueued, id, advanced = '-', '', '-'
  if read_every ~= '' then
    local code
    code, id = enqueue_one(counter, wait, jobs, job_id_of(r), name, fired_at, template)
    enqueued = tostring(code)
  end
  if next_ms ~= '' then
    advanced = tostring(advance_one(registry, registry .. ':' .. name, name, next_ms, read_ms, read_every))
  end
  codes[i] = enqueued .. advanced
  out[i + 1] = id
end
out[1] = table.concat(codes)
return out
