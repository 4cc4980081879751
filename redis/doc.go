// Package redis is a helmstore backend on Redis through go-redis v9: one
// backend for a single server, a Sentinel-managed primary and a Redis
// Cluster. Importing it registers the driver name "redis"; the connection
// string comes from HELM_DRIVER_REDIS_CONNECTION_STRING.
//
// # Connection strings
//
// go-redis's URL forms, with its query parameters (dial_timeout, pool_size,
// ...), plus helmstore's own:
//
//	redis://127.0.0.1:6379/0                      one server, database 0
//	redis://helm:secret@redis.example:6379/2      ACL user and password
//	rediss://redis.example:6380/0?tls_ca_file=/etc/ca.pem
//	                                              TLS, verified against a private CA
//	redis://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000
//	                                              Cluster (several addresses: seeds)
//	redis://cluster.example:7000?cluster=true     Cluster from one seed address
//	redis://:sentinel-secret@10.0.0.1:26379,10.0.0.2:26379/0?master_name=mymaster&password=secret
//	                                              Sentinel: the addresses are Sentinels,
//	                                              master_name the primary's name there,
//	                                              password the primary's password, the
//	                                              URL's user info the Sentinels' own
//
// helmstore's parameters: key_prefix (default "helmstore"; every key the
// backend writes starts with it and a colon, so several tools or
// environments share one Redis, and an ACL user can be limited to
// ~prefix:*), allow_eviction=true (see below), cluster=true,
// tls_ca_file, tls_cert_file and tls_key_file (PEM files: the CA that signs
// the server's certificate, and a client certificate for servers that ask
// for one).
//
// # Layout
//
// A release revision is a head (a hash) and content-addressed parts (chart,
// values, manifest; see the engine). Every key of a namespace carries the
// namespace as its Cluster hash tag, "{ns}", so a write (head, index entries,
// part references) touches one slot and runs as one Lua script: atomic for
// readers on every topology, never CROSSSLOT. Parts are stored once per
// namespace, shared by every revision of every release in it, with a
// reference count per part; a part goes with the last head that references
// it, in the same script. Index sets (per release name, per status, per
// custom label, all of the namespace) serve Query and List; a read takes two
// pipelined round trips (index, heads) plus one for the parts the part cache
// lacks.
//
// A head is a hash of a few fields: the write token (rev), the part
// digests, the body, and one field, index, that packs the index fields
// (name, version, status, owner, times, custom labels) with the release's
// summary (chart name and version, app version, when it was last deployed,
// description), each as its length, a colon and its bytes. Summary listings
// (Store.Summaries) read that field instead of the body: from the keys of
// each namespace's index set alone (a key names the release and its
// revision) the listing chooses the latest revisions, the name prefix and
// the page, then reads the index field of the chosen heads only, in one
// pipelined round trip, never a body or a part. Heads written by earlier
// versions hold the same fields unpacked, one hash field each, and are read
// so (one more round trip for those) until their next write packs them; one
// written before the backend kept the summary has none, and the engine
// reads that release whole to list it.
//
// The tag is per namespace, not per release, because the engine addresses
// parts by namespace and digest: with a tag per release, a part shared by
// two releases would need a copy per release, and a List of a namespace one
// read per release. The cost: one namespace's releases live on one Cluster
// primary.
//
// # Reads across namespaces
//
// Invariant: a namespace's releases are reachable from the all-namespaces
// view (List and Query of the "" namespace, Get through it) whenever they
// are readable at all, whatever the server lost (a FLUSHALL, a restart
// without persistence). The namespace registry is added to by the same
// script that writes a head, and lives where the head does: data lost
// takes both, and the next write restores both. On one server
// (standalone, Sentinel) it is one set, <prefix>:namespaces. In Cluster,
// where a script writes one slot and a primary can lose its data alone,
// it is one set per slot (<prefix>:{<tag>}:namespaces, the tag one of that
// slot: "_" and a number), holding the namespaces of that slot. A read
// across namespaces reads the sets that exist, found by scanning the
// primaries (SCAN MATCH <prefix>:{_*}:namespaces) when they hold few keys
// (at most 32768 together); it trusts the scan only if every primary's
// view of its own slots (CLUSTER NODES) is the same before and after it,
// with no slot being moved: a scan misses a key that moves between the
// scans of two primaries, and a key moves only while its slot is being
// moved. Otherwise (more keys, a move, an error) it reads all 16384 sets
// with one script per primary, and those a primary does not hold (a slot
// that moved, or is being moved) one by one through the Cluster client,
// which follows the redirects: a cost that does not grow with what else
// the Cluster holds. Where a key of the registry is not a set (damage),
// or the registry names no namespace at all (a store that holds nothing,
// or whose registry was deleted alone), the namespaces are found by
// scanning every primary for their sets of releases (SCAN MATCH
// <prefix>:{*}:all TYPE set): a registry lost or damaged never reads as
// no releases. A member that is not a namespace name (a DNS label) is
// ignored.
//
// # A user per namespace
//
// NamespaceACL returns the rules of an ACL user confined to one namespace
// (Redis 7: they use an ACL selector). Such a user reads and writes its
// namespace's keys (its hash tag) with the commands on keys that are
// neither dangerous nor administrative, and no other key. Of the
// namespace registry it may only add to the keys its namespace is
// registered in (SADD, in a selector of its own): it cannot remove a
// namespace, nor delete, rename, move, expire or replace a key of it, so
// it cannot hide another namespace from the readers of every namespace;
// what it adds that is not a namespace with releases shows in no reader's
// view, and SADD's reply tells it whether a name was registered. Of the
// commands that name no key it may run only those of its own connection,
// transactions, the Cluster's topology, COMMAND, SCRIPT LOAD and EXISTS
// with EVAL and EVALSHA (which run with its rights): nothing that
// enumerates or counts keys (SCAN, KEYS, RANDOMKEY, DBSIZE, INFO), watches
// other clients or keys (CLIENT TRACKING, whose invalidations would name
// other namespaces' keys as they are written; MONITOR, CLIENT LIST,
// SLOWLOG; no Pub/Sub channel, so no keyspace notifications), or changes
// the server (CONFIG, FLUSHALL, SCRIPT FLUSH, FUNCTION, CLIENT KILL, ...).
// Redis bounds neither the memory nor the time its commands and scripts
// use.
//
// # Writes
//
// Every write is one script, atomic for readers, and:
//
//   - Idempotent. go-redis sends a command again when its reply is lost
//     (a timeout, a reset connection). The script records its reply under
//     a token of its own (<prefix>:{ns}:o:<token>) for twice the store's
//     timeout (driver.Config.Timeout, helm3.WithTimeout), and at least
//     five minutes: a resend comes within the operation. A run that finds
//     the record returns it, writing nothing: a Create whose reply was
//     lost answers nil, not "exists", and a Delete returns the
//     release it deleted, not "not found". A record holds the reply's
//     status and the digests of the parts it freed, never frames: a
//     Delete reads the frames it returns before its script (they cannot
//     change while the head still has the rev the script checks), so
//     however large the release, its record is small, and a Delete whose
//     frames cannot be read in time fails as unavailable having written
//     nothing. A write whose every reply is lost fails as unavailable: it
//     may or may not have been applied, and a Get tells which.
//   - Checked before its first write. Redis does not roll a script back,
//     so the script checks the type of every key it touches and that every
//     reference count it changes is a number before it writes anything: a
//     script that refuses writes nothing (and declares itself a script
//     that writes, so that a server out of memory refuses it whole).
//
// # Damaged keys
//
// A key of another type than the backend writes there, or a hash missing
// a field, is damage to the releases it touches, never a raw WRONGTYPE and
// never a failure of the namespace: a head that is not a hash reads as
// driver.ErrCorrupt, a part that is not a hash as a missing part (so the
// releases using it are ErrCorrupt); an index set, the set of parts or the
// registry that is not a set is skipped by writes and replaced by a scan
// in reads (of the namespace's heads, or for namespaces), so List, Query
// and Stats still answer. Such releases stay deletable: Delete removes the
// head whatever it holds, and leaves a part whose references it cannot
// count (a leak, never a part dropped under another release). A Create or
// Update that carries such a part (one that is not a hash, or whose refs
// is not a count) heals it in its script: it writes the part's frame over
// the key and counts its references again from the heads of the
// namespace's set of releases (or, if that is not a set, keeps the part
// for good). It does the same for a part the engine found damaged on a
// read (driver.Part.Rewrite: bytes that do not hash to its digest, which
// a write that holds a reference cannot see). A head without its rev is
// updated and deleted as one whose rev is empty.
//
// # Safety checks on Open
//
// A server whose maxmemory-policy is not noeviction may delete keys when it
// runs out of memory, silently losing releases: Open refuses it unless the
// connection string says allow_eviction=true. A server that persists nothing
// (save "" and appendonly no) loses every release when it restarts: Open
// logs a warning. Where CONFIG GET is not allowed (managed Redis, an ACL
// user without it), Open logs that it cannot check and goes on.
//
// # Errors
//
// Errors from reaching the server (refused or reset connections, timeouts, a
// server loading or without a primary) wrap driver.ErrUnavailable and are
// never "not found". A server refusing the credentials (WRONGPASS: a wrong
// password or user; NOAUTH: no password where one is required) or an
// operation (NOPERM: an ACL rule) wraps driver.ErrAccessDenied instead: a
// setting to fix, not an outage. A userinfo without ':' is a password, as
// redis-cli reads it: redis://secret@host authenticates with "secret" (an
// ACL user without a password is redis://user:@host). Writes that find the
// head changed since they read it (another writer) read again and retry:
// the last writer wins, whole.
//
// # Failover
//
// In Cluster, a command that cannot reach its node (the primary died) makes
// the client reload the slot map and is sent again, for up to 20 s: the
// replica the cluster promotes is used as soon as the cluster has it
// (go-redis alone reloads the map once a minute, and dials the dead address
// meanwhile). Sending again is safe, since writes are idempotent. go-redis
// dials once per attempt (dialer_retries defaults to 1 here, 5 in go-redis),
// so a host that does not answer costs one dial_timeout per attempt.
//
// # Logs
//
// go-redis logs through one logger per process. This package installs one
// (redis.SetLogger) that sends a line about a dial error to the log of the
// store whose connection failed (driver.Config.Log; each store dials through
// its own dialer, which marks its errors), a line logged with the context
// of a store's operation (each store's client puts its log in the context
// of its commands) to that store's log, and any other line to the log of
// the one store open when only one is, and otherwise, since it cannot be
// told apart among several stores, to the process's standard log (package
// log), never to an arbitrary store's. A program that calls
// redis.SetLogger after importing the package takes its lines back.
package redis
