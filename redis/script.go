package redis

import goredis "github.com/redis/go-redis/v9"

// writeScript is every write (Create, Update, Delete) of one release as one
// Lua script, so that readers see all of it or none of it. go-redis runs it
// with EVALSHA and falls back to EVAL when the server does not have it yet
// (a restarted server, a Cluster node that took over the slot).
//
// Every key it touches is in KEYS but the registry's, and all of them are
// in the namespace's slot (its hash tag, or for the registry in Cluster a
// tag of that slot), so in Cluster it runs on the one node that holds the
// slot (and a slot being moved answers ASK or TRYAGAIN, which go-redis
// follows and retries). A namespace is added to the registry (registry.go)
// by the same script that writes a head there. The registry's key is an
// argument, not a KEYS entry: Redis checks a user's rights to every key in
// KEYS with the rights to run EVALSHA, and a user of NamespaceACL may only
// add to the registry (SADD, in an ACL selector of its own), which Redis
// checks when the script runs it.
//
// Redis does not roll a script back: a command that fails half way leaves
// the commands before it applied. So the script checks everything that can
// fail before its first write: the type of every key it touches, and that
// every reference count it changes is a number. The shebang makes Redis
// refuse the whole script when it is out of memory, instead of failing at
// the first write that allocates.
//
// It is idempotent: a run records its reply under the write's token
// (KEYS[3]) for recordTTL (ARGV), and a run that finds the record returns it
// without writing anything. go-redis sends a script again when its reply
// was lost (a timeout, a connection reset); the second run then answers
// what the first did, instead of "exists" or "not found" for the first
// run's own work.
//
// KEYS[1] the head, KEYS[2] the namespace's set of parts, KEYS[3] the
// record of this write's reply, then the index sets and part hashes,
// referred to by position from ARGV.
//
// ARGV: op ("c" create, "u" update, "d" delete); the rev the writer read
// (update, delete; "" for a head without one, wrongTypeRev for a head that
// is not a hash); the new rev; the release key (the member of the index
// sets); the namespace; the registry's key; the namespace's set of
// releases and the prefix of its heads' keys (to count a part's
// references again, undeclared keys of the slot); the record's time to
// live in milliseconds; n, then n field/value pairs of the head; n, then
// the positions in KEYS of the sets to remove the member from; n, then of
// the sets to add it to; n, then n part operations of 7 values each:
// position in KEYS of the part's hash, digest, reference delta (1, -1, or
// 0 for a part only rewritten), "1" if its frame is sent, "2" if it is
// sent to be written over the stored copy (driver.Part.Rewrite), "0" if
// not sent, kind, raw size, frame.
//
// Replies: {"EXISTS"} (create: the head exists), {"NOTFOUND"} (update,
// delete: no head), {"CONFLICT"} (the head's rev is not the one read),
// {"MISSING", digests...} (parts referenced but neither stored nor sent),
// {"CORRUPT", what} (create, update: a part it references, or the record,
// is damaged), all of which write nothing; or {"OK", freed digests...}; or
// an error (the user may not add to the registry: ACL), having written
// nothing.
// The script returns no frames, so a record stays small: a Delete reads
// the frames it returns before its script (they cannot change while the
// head keeps the rev read, which references them).
//
// A key of the wrong type (not what the backend writes there) is skipped,
// not written: an index set, the set of parts or the registry (readers
// find releases without them: see the reads; the registry, whose type the
// script does not read, by the WRONGTYPE of its SADD), and, for Delete, a
// part hash (its references stay, a leak at worst) and the head itself
// (deleted whatever it holds). A part whose refs is missing or not a count is left
// as it is by Delete (a leak, never a part dropped under another release).
// A Create or Update that carries such a part (one that is not a hash, or
// whose refs is not a count), or one marked Rewrite, heals it: its frame
// (asked for with MISSING if not sent) written over the stored copy, and
// its references counted again from the heads of the namespace's set of
// releases (pinnedRefs if that is not a set), before the write's own.
var writeScript = goredis.NewScript(`#!lua
local op = ARGV[1]
local head, partsKey, record = KEYS[1], KEYS[2], KEYS[3]
local function typeOf(k) return redis.call('TYPE', k)['ok'] end

local rt = typeOf(record)
if rt == 'string' then return cmsgpack.unpack(redis.call('GET', record)) end
if rt ~= 'none' then return {'CORRUPT', 'the record of this write is a ' .. rt} end

local ht = typeOf(head)
if op == 'c' then
  if ht ~= 'none' then return {'EXISTS'} end
else
  if ht == 'none' then return {'NOTFOUND'} end
  if ht == 'hash' then
    if (redis.call('HGET', head, 'rev') or '') ~= ARGV[2] then return {'CONFLICT'} end
  elseif ARGV[2] ~= '` + wrongTypeRev + `' then
    return {'CONFLICT'}
  end
end

local newRev, member, ns, reg = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local allKey, headPrefix = ARGV[7], ARGV[8]
local ttl = ARGV[9]
local i = 10
local nf = tonumber(ARGV[i]); i = i + 1
local fields = {}
for j = 1, 2 * nf do fields[j] = ARGV[i]; i = i + 1 end
local isSet = {}
local function usable(k)
  if isSet[k] == nil then
    local t = typeOf(k)
    isSet[k] = t == 'set' or t == 'none'
  end
  return isSet[k]
end
local nrem = tonumber(ARGV[i]); i = i + 1
local rem = {}
for j = 1, nrem do
  local k = KEYS[tonumber(ARGV[i])]; i = i + 1
  if usable(k) then rem[#rem + 1] = k end
end
local nadd = tonumber(ARGV[i]); i = i + 1
local add = {}
for j = 1, nadd do
  local k = KEYS[tonumber(ARGV[i])]; i = i + 1
  if usable(k) then add[#add + 1] = k end
end
local partsOK = usable(partsKey)

-- The heads of the namespace that reference digest d (any of their digest
-- fields), from its set of releases: nil if that is not a set.
local function recount(d)
  if not usable(allKey) then return nil end
  local n = 0
  for _, m in ipairs(redis.call('SMEMBERS', allKey)) do
    local r = redis.pcall('HMGET', headPrefix .. m, 'chart', 'values', 'manifest', 'values_base', 'manifest_base')
    if type(r) == 'table' and not r['err'] then
      for _, v in ipairs(r) do
        if v == d then n = n + 1; break end
      end
    end
  end
  return n
end

local np = tonumber(ARGV[i]); i = i + 1
local parts = {}
local missing = {'MISSING'}
for j = 1, np do
  local p = {key = KEYS[tonumber(ARGV[i])], digest = ARGV[i + 1], delta = tonumber(ARGV[i + 2]),
    sent = ARGV[i + 3] ~= '0', rewrite = ARGV[i + 3] == '2', kind = ARGV[i + 4], size = ARGV[i + 5], frame = ARGV[i + 6]}
  i = i + 7
  parts[j] = p
  local t = typeOf(p.key)
  p.hash = t == 'hash'
  p.wrong = t ~= 'hash' and t ~= 'none'
  local damaged = p.wrong
  if p.hash then
    local r = redis.call('HGET', p.key, 'refs')
    damaged = not r or not string.match(r, '^%d+$') or #r > 15
  end
  if p.delta < 0 then
    p.skip = damaged
  else
    p.heal = damaged or p.rewrite
  end
  if (p.delta > 0 or p.heal) and not p.sent and (not p.hash or redis.call('HEXISTS', p.key, 'frame') == 0) then
    missing[#missing + 1] = p.digest
  end
end
if #missing > 1 then return missing end
for _, p in ipairs(parts) do
  if p.heal then p.count = recount(p.digest) end
end

-- Nothing above wrote. The first write adds ns to the registry, which
-- may be refused (ACL): nothing is written then. A registry of the wrong
-- type is left as it is. Nothing after it fails.
if op ~= 'd' then
  local r = redis.pcall('SADD', reg, ns)
  if type(r) == 'table' and r['err'] and not string.match(r['err'], '^WRONGTYPE') then return r end
end
if op ~= 'c' then redis.call('DEL', head) end
if op ~= 'd' then redis.call('HSET', head, 'rev', newRev, unpack(fields)) end
for _, k in ipairs(rem) do redis.call('SREM', k, member) end
for _, k in ipairs(add) do redis.call('SADD', k, member) end

local freed = {}
for _, p in ipairs(parts) do
  if p.heal then
    if p.wrong then redis.call('DEL', p.key) end
    if p.sent then redis.call('HSET', p.key, 'frame', p.frame, 'kind', p.kind, 'size', p.size) end
    redis.call('HSET', p.key, 'refs', p.count or '` + pinnedRefs + `')
    if partsOK then redis.call('SADD', partsKey, p.digest) end
  end
  if p.delta > 0 then
    redis.call('HINCRBY', p.key, 'refs', p.delta)
    if p.sent and redis.call('HEXISTS', p.key, 'frame') == 0 then
      redis.call('HSET', p.key, 'frame', p.frame, 'kind', p.kind, 'size', p.size)
    end
    if partsOK then redis.call('SADD', partsKey, p.digest) end
  elseif p.delta < 0 and p.hash and not p.skip then
    local r = redis.call('HINCRBY', p.key, 'refs', p.delta)
    if r <= 0 then
      redis.call('DEL', p.key)
      if partsOK then redis.call('SREM', partsKey, p.digest) end
      freed[#freed + 1] = p.digest
    end
  end
end

local out = {'OK'}
for _, d in ipairs(freed) do out[#out + 1] = d end
redis.call('SET', record, cmsgpack.pack(out), 'PX', ttl)
return out
`)

// pinnedRefs is the reference count a healed part gets when its
// references cannot be counted (the namespace's set of releases is not a
// set): no Delete brings it to zero, so it is kept for good (a leak, never
// a part dropped under another release).
const pinnedRefs = "1000000000000"

// wrongTypeRev is the rev a writer sends for a head that is not a hash (it
// could read no rev): the script applies only if the head is still not a
// hash. Revs are hex, so no head ever carries it.
const wrongTypeRev = "!not-a-hash"

// pruneScript removes a release key from index sets when its head does not
// exist (stale entries left by the Delete of a head whose labels could not
// be read), skipping sets that are not sets. KEYS[1] the head, KEYS[2...]
// the sets; ARGV[1] the member.
var pruneScript = goredis.NewScript(`#!lua
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for j = 2, #KEYS do
  if redis.call('TYPE', KEYS[j])['ok'] == 'set' then redis.call('SREM', KEYS[j], ARGV[1]) end
end
return 1
`)
