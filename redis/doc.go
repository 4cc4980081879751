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
// lacks. Reads across namespaces consult a namespace registry (its own key,
// in its own slot), added to before a namespace's first write: a crash in
// between leaves an empty namespace listed, which readers skip.
//
// The tag is per namespace, not per release, because the engine addresses
// parts by namespace and digest: with a tag per release, a part shared by
// two releases would need a copy per release, and a List of a namespace one
// read per release. The cost: one namespace's releases live on one Cluster
// primary.
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
// Errors from reaching the server (refused or reset connections, timeouts, a
// server loading or without a primary) are never "not found". Writes that
// find the head changed since they read it (another writer) read again and
// retry: the last writer wins, whole.
package redis
