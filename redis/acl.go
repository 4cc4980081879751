package redis

// NamespaceACL returns the ACL rules that confine a Redis user to the
// releases of one namespace of the store whose keys start with prefix
// (DefaultPrefix unless the connection string's key_prefix says
// otherwise), for ACL SETUSER after the user's name, "on" and its
// password:
//
//	ACL SETUSER team-a on >secret <rules...>
//
// They need Redis 7 (ACL selectors). They reset the user's keys,
// channels, commands and selectors first, so applying them to a user made
// with other rules (those of an earlier version) replaces those.
//
// The user may read and write every key of the namespace (its hash tag,
// "{namespace}"), and of the namespace registry only add to it (SADD on
// the keys the namespace is registered in, through an ACL selector): it
// may not read it, remove a namespace from it, delete, rename, move,
// expire or replace it, so it cannot hide another namespace from the
// readers of every namespace (a name it adds that is not a namespace
// with releases shows in no reader's view). Its commands are those on
// keys (confined to those keys) but the dangerous and administrative
// ones, the scripts the store runs (EVAL, EVALSHA and their read-only
// forms, SCRIPT LOAD and EXISTS), transactions, and the connection's own
// commands; of the commands that name no key, none that tells anything
// of other keys or other clients: no SCAN, KEYS, RANDOMKEY or DBSIZE, no
// client-side caching (CLIENT TRACKING, whose invalidations would name
// other namespaces' keys as they are written), no Pub/Sub channel at all
// (keyspace notifications, the invalidation channel), no SCRIPT FLUSH,
// KILL or DEBUG, no FUNCTION (which would load and delete the
// server's functions). A store it opens reads and writes releases
// in its namespace, and fails with driver.ErrAccessDenied on any other
// namespace and on reads across namespaces. namespace must be a
// Kubernetes namespace name (a DNS label).
func NamespaceACL(prefix, namespace string) []string {
	p, k := globEscape(prefix), keys{prefix: prefix}
	return []string{
		"resetkeys", "~" + p + ":{" + globEscape(namespace) + "}:*",
		"resetchannels", "clearselectors",
		"-@all", "+@read", "+@write", "+@connection", "+@transaction",
		"-@dangerous", "-@admin",
		"-scan", "-randomkey", "-dbsize", "-client|tracking", "-function",
		"+eval", "+evalsha", "+eval_ro", "+evalsha_ro", "+script|load", "+script|exists",
		"+cluster|shards", "+cluster|nodes", "+cluster|slots", "+readonly",
		// The registry: adding to it, nothing else (registry.go).
		"(~" + globEscape(k.namespaces()) + " ~" + globEscape(k.slotRegistry(keySlot(k.all(namespace)))) + " +sadd)",
	}
}
