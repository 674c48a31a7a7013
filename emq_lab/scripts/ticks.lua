-- ticks: the pump's fast path. Many ticks in one call, or a drain's batches: each tick reads its
-- due rows and fires them in the same call, the next run computed here by the pump's rule. The
-- rows are read inside the script, so nothing can move them between the read and the advance.
--
-- KEYS[1]  registry  emq:{q}:repeat         ZSET, member = name, score = next run (ms)
--                    (each member's record is KEYS[1] .. ':' .. name, on the same slot)
-- KEYS[2]  counter   emq:{q}:id             STRING, the last fresh job number
-- KEYS[3]  wait      emq:{q}:wait           LIST of job ids, newest at the head
-- KEYS[4]  jobs      emq:{q}:job:           prefix of the job hashes; a job's key is KEYS[4] .. job_id
-- ARGV[1]  mode      "ticks" = ticks at now_ms, now_ms + tick_ms, ...: each reads one batch;
--                    a tick that would find nothing due is passed over (it would read nothing and
--                    write nothing). "drain" = one tick at now_ms whose batches go on until
--                    nothing fresh is due
-- ARGV[2]  now_ms    the first tick's "now", in milliseconds
-- ARGV[3]  tick_ms   ticks: the time between two ticks; 0 = a tick at each moment a row falls due.
--                    drain: 0
-- ARGV[4]  batch     the most rows one due read takes, an integer >= 1
-- ARGV[5]  reads     the most due reads this call takes (bounds its time), an integer >= 1
-- ARGV[6]  want      ticks: stop after the tick at which this many occurrences have fired (>= 1).
--                    drain: 0
-- ARGV[7]  ids       "fresh" = mint JOB-000001 from the counter (INCRBY, a tick's live rows at
--                    once, after every check);
--                    "slot" = the slot-keyed id <name>:<slot_ms>
-- ARGV[8]  rule      "start-to-start": next = now + every_ms; "fixed grid": the slot after the
--                    one that fired, missed slots skipped; "start-to-finish": the pump leaves the
--                    row for the finish of its run
-- ARGV[9]  finish    "" = no finish here; else (start-to-finish, ticks) each run finishes this many
--                    ms after its release and its finish advances the row to finish + every_ms,
--                    as Repeat.advance does
--
-- Then, for a drain only, the names to pass over: those an earlier batch of the same drain fired
-- that are still due (each is fired once a drain).
--
-- Returns {codes, next_now, more, numbers, due, then two entries a row taken, in order: name,
-- job id ("" when none), then (a drain) the names it fired that are still due, for the next call
-- to pass over}
--   numbers has three numbers a row, in the same order, joined by commas: slot (the score read,
--   ms), next (its score now, ms; "" when swept), fired_at (the tick's now, ms)
--   codes has two characters a row, as fire.lua's: the enqueue's ("1" stored and pushed,
--   "0" the id exists: a replayed slot, "-" the record was gone) then the advance's ("1" moved
--   to next, "0" the record was gone: the member swept, "-" left for its finish)
--   next_now: the now the next call takes up from (ticks: the tick after the last one taken;
--   drain: now_ms)
--   more: "1" when the call stopped at its reads and more may be due (a drain: a fresh row is
--   due past its last batch); "0" when it stopped because it fired what it wanted (ticks) or
--   nothing (more) is due (drain), or nothing is registered
--   due: a drain: how many rows are due at now after it (ZCOUNT), the names to pass over among
--   them; ticks: ""
--   error reply when the KEYS are not one queue's or ARGV is malformed; nothing is written
local registry, counter, wait, jobs = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode, ids, rule, finish = ARGV[1], ARGV[7], ARGV[8], ARGV[9]
-- @include lib/enqueue.lua
-- @include lib/advance.lua

local function whole(text, least)
  if type(text) ~= 'string' or not text:match('^%-?%d+$') or #text > 16 then
    return nil
  end
  local n = tonumber(text)
  if n < least then
    return nil
  end
  return n
end

local now = whole(ARGV[2], -1e16)
local tick, batch, reads, want = whole(ARGV[3], 0), whole(ARGV[4], 1), whole(ARGV[5], 1), whole(ARGV[6], 0)
local bad = enqueue_keys_error(counter, wait, jobs)
if not bad and registry ~= wait:sub(1, -6) .. ':repeat' then
  bad = 'KEYS[1] must be the registry of the queue whose wait list is KEYS[3]'
end
if not bad and mode ~= 'ticks' and mode ~= 'drain' then
  bad = 'mode must be "ticks" or "drain"'
elseif not bad and not now then
  bad = 'now_ms must be an integer'
elseif not bad and not tick then
  bad = 'tick_ms must be an integer >= 0'
elseif not bad and (not batch or batch > 100000) then
  bad = 'batch must be an integer from 1 to 100000'
elseif not bad and (not reads or reads > 100000) then
  bad = 'reads must be an integer from 1 to 100000'
elseif not bad and not want then
  bad = 'want must be an integer >= 0'
elseif not bad and ids ~= 'fresh' and ids ~= 'slot' then
  bad = 'ids must be "fresh" or "slot"'
elseif not bad and rule ~= 'start-to-start' and rule ~= 'fixed grid' and rule ~= 'start-to-finish' then
  bad = 'rule must be "start-to-start", "fixed grid" or "start-to-finish"'
elseif not bad and finish ~= '' and (rule ~= 'start-to-finish' or mode ~= 'ticks' or not whole(finish, 0)) then
  bad = 'finish must be "" or, for ticks under start-to-finish, an integer >= 0'
elseif not bad and mode == 'ticks' and (want < 1 or #ARGV > 9) then
  bad = 'ticks take want >= 1 and no names to pass'
elseif not bad and mode == 'drain' and (tick ~= 0 or want ~= 0 or rule == 'start-to-finish') then
  bad = 'a drain takes tick_ms 0, want 0 and a rule that moves the rows it fires'
end
if not bad then
  for i = 10, #ARGV do
    if ARGV[i] == '' then
      bad = 'a name to pass must be a non-empty string'
      break
    end
  end
end
if bad then
  return redis.error_reply('ERR emq ticks: ' .. bad)
end

-- A time in ms as its digits. '%.0f', not '%d': fengari (Lua 5.3, the JupyterLite edition) has
-- 32-bit integers, so a time past 2^31 is a float there, and '%d' refuses any float. 0 is
-- written '0' (a "-0" now must not become the text "-0").
local function ms(n)
  if n == 0 then
    return '0'
  end
  return string.format('%.0f', n)
end

-- The score the rule gives a row read at slot after a release at now (nil: left for its finish).
local function next_run(slot, every)
  if rule == 'start-to-start' then
    return now + every
  elseif rule == 'fixed grid' then
    if slot + every >= now then
      return slot + every
    end
    return slot + (math.floor((now - slot) / every) + 1) * every
  end
  return nil
end

-- Each time's digits, made once (the rows of a tick often share a slot, and share a next run).
-- A row looks in texts first: the lookup costs less than the call.
local texts = {}
local function text(n)
  local digits = texts[n]
  if not digits then
    digits = ms(n)
    texts[n] = digits
  end
  return digits
end

-- Hand the entries of args, in order, to send, at most 1,000 a call (a Lua call takes only so
-- many arguments; pairs stay whole).
local unpack = unpack or table.unpack  -- Lua 5.1 (the server) or 5.3 (fengari)
local function in_chunks(args, send)
  for from = 1, #args, 1000 do
    send(unpack(args, from, math.min(from + 999, #args)))
  end
end

local passed = {}
for i = 10, #ARGV do
  passed[ARGV[i]] = true
end
local records = {}  -- name -> {every_ms, template}: nothing in this call writes a record
local pushed, still = {}, {}  -- the job ids to push; the names fired and still due (a drain's)
local scored, nscored = {}, 0  -- a read's (score, name) pairs to add, nscored entries
local codes, numbers, out = {}, {}, {'', '', '', '', ''}
local fired, npassed, more, nrows = 0, #ARGV - 9, '0', 0  -- nrows: the rows taken so far

-- The due read: the registry's first rows by score (the passed ones among them skipped below).
-- The rows due at now are a prefix of it, and its first row says when the next one falls due.
-- A drain reads one row more: whether a fresh row is due past the batch (then it reads again).
local ahead = mode == 'drain' and 1 or 0
local function read()
  return redis.call('ZRANGE', registry, 0, batch + npassed + ahead - 1, 'WITHSCORES')
end

-- A tick at now on what read() returned: each fresh row due at now, at most batch, is fired and
-- advanced by the rule. Returns the runs left for their finish, and whether a fresh row read is
-- due past the batch.
local function one_tick(members)
  local at, released = text(now), {}
  local names, slots, found, taken, live, left = {}, {}, {}, 0, 0, false  -- the rows it takes
  for i = 1, #members, 2 do
    local name, slot = members[i], tonumber(members[i + 1])
    if slot > now then
      break
    end
    if not passed[name] then
      if taken == batch then
        left = true
        break
      end
      local record = records[name]
      if not record then
        record = redis.call('HMGET', registry .. ':' .. name, 'every_ms', 'template')
        if mode == 'ticks' then  -- (a drain takes a name once a call: nothing to keep)
          records[name] = record
        end
      end
      taken = taken + 1
      names[taken], slots[taken], found[taken] = name, slot, record
      if record[1] then
        live = live + 1
      end
    end
  end
  -- The live rows' job ids (fresh ones minted in one call), and whether any of them exists.
  local job_ids, job_keys, asked, nasked, number = {}, {}, {}, 0, 0  -- by row; asked: the keys
  if ids == 'fresh' and live > 0 then
    number = mint(counter, live)
  end
  for j = 1, taken do
    if found[j][1] then
      if ids == 'slot' then
        job_ids[j] = names[j] .. ':' .. text(slots[j])
      else
        job_ids[j], number = fresh_id(number), number + 1
      end
      job_keys[j] = jobs .. job_ids[j]
      nasked = nasked + 1
      asked[nasked] = job_keys[j]
    end
  end
  local existing = 0  -- one EXISTS for them all; none: each is stored without one of its own
  in_chunks(asked, function(...) existing = existing + redis.call('EXISTS', ...) end)
  local absent = existing == 0
  for j = 1, taken do
    local name, slot, every, template = names[j], slots[j], found[j][1], found[j][2]
    local enqueued, advanced, id, nxt, slot_ms = '-', '-', '', '', texts[slot] or text(slot)
    if every then
      if absent then
        id, enqueued = job_ids[j], '1'
        store_one(wait, job_keys[j], id, name, at, template or '', pushed)
      else
        local code
        code, id = enqueue_one(counter, wait, jobs, job_ids[j], name, at, template or '', pushed)
        enqueued = code == 1 and '1' or '0'
      end
      fired = fired + 1
      local score = next_run(slot, tonumber(every))
      if score then
        nxt, advanced = texts[score] or text(score), '1'
        nscored = nscored + 2
        scored[nscored - 1], scored[nscored] = nxt, name
        if mode == 'drain' and score <= now then
          passed[name] = true  -- still due: this drain has fired it once
          npassed = npassed + 1
          still[#still + 1] = name
        end
      else
        nxt = slot_ms
        released[#released + 1] = {name, tonumber(every)}
      end
    else
      redis.call('ZREM', registry, name)
      advanced = '0'
    end
    nrows = nrows + 1  -- (counted here: "#t + 1" searches the table's length each time)
    codes[2 * nrows - 1], codes[2 * nrows] = enqueued, advanced
    numbers[3 * nrows - 2], numbers[3 * nrows - 1], numbers[3 * nrows] = slot_ms, nxt, at
    out[2 * nrows + 4], out[2 * nrows + 5] = name, id
  end
  in_chunks(scored, function(...) redis.call('ZADD', registry, ...) end)  -- before the next read
  scored, nscored = {}, 0
  return released, left
end

for _ = 1, reads do
  local members = read()
  if mode == 'drain' then
    local _, left = one_tick(members)
    more = left and '1' or '0'
    if more == '0' then
      break
    end
  else
    if #members == 0 then
      more = '0'  -- nothing is registered: no tick would fire
      break
    end
    local first = tonumber(members[2])
    if first > now then  -- the ticks before it would find nothing due: pass them over
      now = tick == 0 and first or now + math.ceil((first - now) / tick) * tick
    end
    local released = one_tick(members)
    if finish ~= '' then
      for _, run in ipairs(released) do  -- the worker finishes the run, then advances the row
        local at = now + tonumber(finish) + run[2]
        advance_one(registry, registry .. ':' .. run[1], run[1], ms(at), '', nil)
      end
    end
    now = now + tick
    if fired >= want then
      more = '0'
      break
    end
    more = '1'
  end
end

-- The job ids, pushed once for the whole call: nothing here reads the wait list.
in_chunks(pushed, function(...) redis.call('LPUSH', wait, ...) end)
out[1] = table.concat(codes)
out[2] = ms(now)
out[3] = more
out[4] = table.concat(numbers, ',')
if mode == 'drain' then
  out[5] = tostring(redis.call('ZCOUNT', registry, '-inf', ms(now)))
end
for i = 1, #still do
  out[2 * nrows + 5 + i] = still[i]
end
return out
