-- lib/advance.lua (shared: advance.lua, fire.lua and ticks.lua run these same functions)

-- The error text when the advance's arguments are malformed; nil when they are well formed.
local function advance_args_error(next_ms, read_ms, read_every)
  if type(next_ms) ~= 'string' or not next_ms:match('^%-?%d+$') or #next_ms > 16 then
    return 'next_ms must be an integer'
  end
  if type(read_ms) ~= 'string' or (read_ms ~= '' and (not read_ms:match('^%-?%d+$') or #read_ms > 16)) then
    return 'read_ms must be an integer or empty'
  end
  if read_every ~= nil and (type(read_every) ~= 'string' or (read_every ~= '' and not read_every:match('^[1-9]%d*$'))) then
    return 'read_every must be a period in ms or empty'
  end
  return nil
end

-- Advance one row (arguments checked): 1 moved to next_ms, 0 record gone (member swept),
-- 2 the row or the record is no longer what the caller read (nothing written).
local function advance_one(registry, record, name, next_ms, read_ms, read_every)
  if redis.call('EXISTS', record) == 0 then
    redis.call('ZREM', registry, name)
    return 0
  end
  if read_ms ~= '' then
    local score = redis.call('ZSCORE', registry, name)
    if not score or tonumber(score) ~= tonumber(read_ms) then
      return 2
    end
  end
  if read_every and read_every ~= '' and redis.call('HGET', record, 'every_ms') ~= read_every then
    return 2
  end
  redis.call('ZADD', registry, next_ms, name)
  return 1
end
