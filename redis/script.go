package redis

import goredis "github.com/redis/go-redis/v9"

// writeScript is every write (Create, Update, Delete) of one release as one
// Lua script, so that readers see all of it or none of it. go-redis runs it
// with EVALSHA and falls back to EVAL when the server does not have it yet
// (a restarted server, a Cluster node that took over the slot).
//
// Every key it touches is in KEYS, and all of them carry the namespace's hash
// tag, so in Cluster it runs on the one node that holds the slot (and a slot
// being moved answers ASK or TRYAGAIN, which go-redis follows and retries).
//
// KEYS[1] the head, KEYS[2] the namespace's set of parts, then the index
// sets and part hashes, referred to by position from ARGV.
//
// ARGV: op ("c" create, "u" update, "d" delete); the rev the writer read
// (update, delete); the new rev; the release key (the member of the index
// sets); n, then n field/value pairs of the head; n, then the positions in
// KEYS of the sets to remove the member from; n, then of the sets to add it
// to; n, then n part operations of 8 values each: position in KEYS of the
// part's hash, digest, reference delta (1, -1, 0), "1" to return its frame as
// stored before the write, "1" if its frame is sent, kind, raw size, frame.
//
// Replies: {"EXISTS"} (create: the head exists), {"NOTFOUND"} (update,
// delete: no head), {"CONFLICT"} (the head's rev is not the one read),
// {"MISSING", digests...} (parts referenced but neither stored nor sent:
// nothing was written), or {"OK", n, n digest/frame pairs, freed digests...}
// where a frame is false (nil) for a part that is not stored.
var writeScript = goredis.NewScript(`
local op = ARGV[1]
local head = KEYS[1]
if op == 'c' then
  if redis.call('EXISTS', head) == 1 then return {'EXISTS'} end
else
  local rev = redis.call('HGET', head, 'rev')
  if not rev then
    if redis.call('EXISTS', head) == 0 then return {'NOTFOUND'} end
    return {'CONFLICT'}
  end
  if rev ~= ARGV[2] then return {'CONFLICT'} end
end
local newRev = ARGV[3]
local member = ARGV[4]
local i = 5
local nf = tonumber(ARGV[i]); i = i + 1
local fields = {}
for j = 1, 2 * nf do fields[j] = ARGV[i]; i = i + 1 end
local nrem = tonumber(ARGV[i]); i = i + 1
local rem = {}
for j = 1, nrem do rem[j] = KEYS[tonumber(ARGV[i])]; i = i + 1 end
local nadd = tonumber(ARGV[i]); i = i + 1
local add = {}
for j = 1, nadd do add[j] = KEYS[tonumber(ARGV[i])]; i = i + 1 end
local np = tonumber(ARGV[i]); i = i + 1
local parts = {}
local missing = {'MISSING'}
for j = 1, np do
  local p = {key = KEYS[tonumber(ARGV[i])], digest = ARGV[i + 1], delta = tonumber(ARGV[i + 2]),
    want = ARGV[i + 3] == '1', sent = ARGV[i + 4] == '1', kind = ARGV[i + 5], size = ARGV[i + 6], frame = ARGV[i + 7]}
  i = i + 8
  parts[j] = p
  if p.delta > 0 and not p.sent and redis.call('HEXISTS', p.key, 'frame') == 0 then
    missing[#missing + 1] = p.digest
  end
end
if #missing > 1 then return missing end

local frames = {}
for _, p in ipairs(parts) do
  if p.want then
    frames[#frames + 1] = p.digest
    frames[#frames + 1] = redis.call('HGET', p.key, 'frame')
  end
end

if op == 'd' then
  redis.call('DEL', head)
else
  if op == 'u' then redis.call('DEL', head) end
  redis.call('HSET', head, 'rev', newRev, unpack(fields))
end
for _, k in ipairs(rem) do redis.call('SREM', k, member) end
for _, k in ipairs(add) do redis.call('SADD', k, member) end

local freed = {}
for _, p in ipairs(parts) do
  if p.delta > 0 then
    local r = redis.call('HINCRBY', p.key, 'refs', p.delta)
    if p.sent and redis.call('HEXISTS', p.key, 'frame') == 0 then
      redis.call('HSET', p.key, 'frame', p.frame, 'kind', p.kind, 'size', p.size)
    end
    redis.call('SADD', KEYS[2], p.digest)
  elseif p.delta < 0 and redis.call('EXISTS', p.key) == 1 then
    local r = redis.call('HINCRBY', p.key, 'refs', p.delta)
    if r <= 0 then
      redis.call('DEL', p.key)
      redis.call('SREM', KEYS[2], p.digest)
      freed[#freed + 1] = p.digest
    end
  end
end

local out = {'OK', #frames / 2}
for _, f in ipairs(frames) do out[#out + 1] = f end
for _, d in ipairs(freed) do out[#out + 1] = d end
return out
`)

// pruneScript removes a release key from index sets when its head does not
// exist (stale entries left by the Delete of a head whose labels could not
// be read). KEYS[1] the head, KEYS[2...] the sets; ARGV[1] the member.
var pruneScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for j = 2, #KEYS do redis.call('SREM', KEYS[j], ARGV[1]) end
return 1
`)
