package redis

import (
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// keys builds the names of everything the backend stores, all under one
// prefix. Every key of a namespace carries the namespace as its hash tag,
// "{ns}", so that all of a namespace's keys live in one Cluster slot: a
// write (head, indexes, part references) is one script on one slot, and
// parts are shared by every release of the namespace, the scope in which
// the engine addresses parts (PartRef names a namespace and a digest).
//
//	<prefix>:namespaces             set: namespaces that may hold releases (standalone and Sentinel; registry.go)
//	<prefix>:{<tag>}:namespaces     set: those of them in the tag's slot (Cluster: one per slot, tags from slotTags)
//	<prefix>:{ns}:h:<release key>   hash: the head of one revision (index fields, summary, body, digests)
//	<prefix>:{ns}:all               set: release keys of ns
//	<prefix>:{ns}:n:<name>          set: release keys of one release name
//	<prefix>:{ns}:s:<status>        set: release keys with one status
//	<prefix>:{ns}:l:<key>=<value>   set: release keys with one custom label
//	<prefix>:{ns}:parts             set: digests of the parts stored in ns
//	<prefix>:{ns}:p:<digest>        hash: one part (frame, kind, raw size, references)
//	<prefix>:{ns}:o:<token>         string: the reply of one write, for a while (writeScript, recordTTL)
type keys struct{ prefix string }

func (k keys) tag(ns string) string { return k.prefix + ":{" + ns + "}:" }

// namespaces is the registry of namespaces, for reads across namespaces.
func (k keys) namespaces() string { return k.prefix + ":namespaces" }

// slotRegistry is the registry of the namespaces in one Cluster slot.
func (k keys) slotRegistry(slot int) string {
	return k.prefix + ":{" + slotTags()[slot] + "}:namespaces"
}

func (k keys) head(ns, key string) string     { return k.tag(ns) + "h:" + key }
func (k keys) all(ns string) string           { return k.tag(ns) + "all" }
func (k keys) name(ns, name string) string    { return k.tag(ns) + "n:" + name }
func (k keys) status(ns, s string) string     { return k.tag(ns) + "s:" + s }
func (k keys) label(ns, lk, lv string) string { return k.tag(ns) + "l:" + lk + "=" + lv }
func (k keys) parts(ns string) string         { return k.tag(ns) + "parts" }
func (k keys) part(ns string, d driver.Digest) string {
	return k.tag(ns) + "p:" + d.String()
}
func (k keys) record(ns, token string) string { return k.tag(ns) + "o:" + token }

// allPattern matches the all-releases set of every namespace (and, since *
// spans braces, other keys, which namespaceOfAll tells apart).
func (k keys) allPattern() string { return globEscape(k.prefix) + ":{*}:all" }

// namespaceOfAll returns the namespace whose all-releases set key is, if
// it is one.
func (k keys) namespaceOfAll(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+":{")
	if !ok {
		return "", false
	}
	ns, ok := strings.CutSuffix(rest, "}:all")
	if !ok || !isNamespace(ns) {
		return "", false
	}
	return ns, true
}

// isNamespace reports whether ns is a Kubernetes namespace name, a DNS
// label (RFC 1123: at most 63 lower-case letters, digits and '-', starting
// and ending with a letter or digit), as every write's namespace is.
// Anything else found in the registry or in a key's hash tag names no
// namespace: a user confined to one may add any string to the registry,
// and "team-a}:x" would name keys under team-a's own hash tag.
func isNamespace(ns string) bool {
	if ns == "" || len(ns) > 63 || ns[0] == '-' || ns[len(ns)-1] == '-' {
		return false
	}
	for i := 0; i < len(ns); i++ {
		if c := ns[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// headPattern matches every head of ns, partPattern every part.
func (k keys) headPattern(ns string) string { return globEscape(k.tag(ns)) + "h:*" }
func (k keys) partPattern(ns string) string { return globEscape(k.tag(ns)) + "p:*" }

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// validPrefix reports whether p can prefix keys: not empty, and without the
// braces that would change the hash tag.
func validPrefix(p string) bool {
	return p != "" && !strings.ContainsAny(p, "{}")
}

// Head hash fields. A head holds rev, index (packIndex: the index fields
// and the summary, packed in one field, so that a listing reads two fields
// of a head, not fourteen), the part digests and the body. The fields from
// name to labels and from summary to description are those of heads
// written before the index was packed, which are read as they are until
// their next write.
const (
	fIndex    = "index"
	fName     = "name"
	fVersion  = "version"
	fStatus   = "status"
	fOwner    = "owner"
	fCreated  = "created"
	fModified = "modified"
	fLabels   = "labels" // JSON object of custom labels
	fChart    = "chart"
	fValues   = "values"
	fManifest = "manifest"
	fVBase    = "values_base"
	fMBase    = "manifest_base"
	fBody     = "body"
	// fRev is a random token set by every write of the head: an Update or
	// Delete applies only if the head still has the token its writer read
	// (compare-and-swap; random, so a release deleted and created again
	// never looks unchanged).
	fRev = "rev"
	// The summary (driver.Head.HasSummary and the fields it vouches for),
	// which List reads instead of the body. fSummary is "1" in a head
	// written with it; a head written before the backend kept summaries
	// has none of these fields.
	fSummary      = "summary"
	fChartName    = "chart_name"
	fChartVersion = "chart_version"
	fAppVersion   = "app_version"
	fUpdated      = "updated"
	fDescription  = "description"
)

// Part hash fields.
const (
	pFrame = "frame"
	pKind  = "kind"
	pSize  = "size" // raw (uncompressed) size
	pRefs  = "refs" // heads of the namespace referencing the part
)
