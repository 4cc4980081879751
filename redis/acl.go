package redis

// NamespaceACL returns the ACL rules that confine a Redis user to the
// releases of one namespace of the store whose keys start with prefix
// (DefaultPrefix unless the connection string's key_prefix says
// otherwise), for ACL SETUSER after the user's name, "on" and its
// password:
//
//	ACL SETUSER team-a on >secret <rules...>
//
// The user may read and write every key of the namespace (its hash tag,
// "{namespace}") and the namespace registry (which names namespaces, never
// releases), and run every command but the administrative and dangerous
// ones and those that enumerate keys (SCAN, KEYS, RANDOMKEY): a store it
// opens reads and writes releases in its namespace, and fails with
// driver.ErrAccessDenied on any other namespace and on reads across
// namespaces. namespace must be a Kubernetes namespace name (a DNS label).
func NamespaceACL(prefix, namespace string) []string {
	p := globEscape(prefix)
	return []string{
		"resetkeys",
		"~" + p + ":{" + globEscape(namespace) + "}:*",
		"~" + p + ":namespaces",      // the registry (standalone, Sentinel)
		"~" + p + ":{_*}:namespaces", // the registries of Cluster slots
		"resetchannels",
		"-@all", "+@read", "+@write", "+@scripting", "+@connection", "+@transaction",
		"-@dangerous", "-@admin", "-scan", "-randomkey",
		"-function", "+cluster|shards", "+cluster|nodes", "+cluster|slots", "+readonly",
	}
}
