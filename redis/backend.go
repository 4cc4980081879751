package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
)

// redisBackend is driver.Backend over a go-redis UniversalClient.
type redisBackend struct {
	c   goredis.UniversalClient
	k   keys
	log func(format string, v ...interface{})
	// cluster is set for a Cluster client: the namespace registry is then
	// one set per slot (registry.go).
	cluster bool
	// known remembers parts seen stored, so a write sends only the frames
	// the server is likely to lack (the script asks for any it does lack).
	known *knownParts
	// recordTTL is how long a write's reply is kept (recordTTL).
	recordTTL time.Duration
	// retries bounds how often a write whose head changed between its read
	// and its script (another writer won) is tried again.
	retries int
	// scriptRefused is set once a server refused registryScript (logged
	// once).
	scriptRefused atomic.Bool
	// sink is the store's log for go-redis's lines while the store is
	// open (log.go).
	sink *logSink
}

var _ driver.Backend = (*redisBackend)(nil)

func newBackend(c goredis.UniversalClient, prefix string, log func(string, ...interface{})) *redisBackend {
	_, cluster := c.(*goredis.ClusterClient)
	return &redisBackend{c: c, k: keys{prefix: prefix}, log: log, cluster: cluster, known: newKnownParts(4096), retries: 200, recordTTL: minRecordTTL}
}

// Close closes the client's connections.
func (b *redisBackend) Close() error {
	if b.sink != nil {
		b.sink.close()
	}
	return b.c.Close()
}

// logged returns ctx marked with the store's log (sinkHook), for commands
// sent on a Cluster node's own client, which has no hook of the store's.
func (b *redisBackend) logged(ctx context.Context) context.Context {
	return sinkHook{sink: b.sink}.ctx(ctx)
}

// scan returns the keys matching pattern (of type typ, "" for any): on the
// primary that serves slotKey's slot, or for slotKey "" on every primary.
func (b *redisBackend) scan(ctx context.Context, slotKey, pattern, typ string) ([]string, error) {
	ctx = b.logged(ctx)
	var mu sync.Mutex
	var out []string
	one := func(ctx context.Context, c *goredis.Client) error {
		keys, err := scanNode(ctx, c, pattern, typ)
		mu.Lock()
		out = append(out, keys...)
		mu.Unlock()
		return err
	}
	err := b.again(ctx, func() error {
		out = out[:0]
		switch c := b.c.(type) {
		case *goredis.ClusterClient:
			if slotKey == "" {
				return c.ForEachMaster(ctx, one)
			}
			m, err := c.MasterForKey(ctx, slotKey)
			if err != nil {
				return err
			}
			return one(ctx, m)
		case *goredis.Client:
			return one(ctx, c)
		}
		return fmt.Errorf("unexpected client %T", b.c)
	})
	return out, err
}

// scanNode returns the keys of the server c matching pattern (of type typ,
// "" for any).
func scanNode(ctx context.Context, c *goredis.Client, pattern, typ string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		var page []string
		var err error
		if typ != "" {
			page, cursor, err = c.ScanType(ctx, cursor, pattern, 1000, typ).Result()
		} else {
			page, cursor, err = c.Scan(ctx, cursor, pattern, 1000).Result()
		}
		if err != nil {
			return out, err
		}
		out = append(out, page...)
		if cursor == 0 {
			return out, nil
		}
	}
}

// indexSets returns the index sets q selects by in ns (none: all of ns).
func (b *redisBackend) indexSets(ns string, q driver.Query) []string {
	var sets []string
	if q.Name != "" {
		sets = append(sets, b.k.name(ns, q.Name))
	}
	if q.Status != "" {
		sets = append(sets, b.k.status(ns, q.Status))
	}
	lks := make([]string, 0, len(q.Labels))
	for k := range q.Labels {
		lks = append(lks, k)
	}
	sort.Strings(lks)
	for _, k := range lks {
		sets = append(sets, b.k.label(ns, k, q.Labels[k]))
	}
	if len(sets) == 0 {
		sets = append(sets, b.k.all(ns))
	}
	return sets
}

// headKeys returns the release key of every head of ns, by scanning: for
// a namespace whose index sets cannot be trusted (one is not a set).
func (b *redisBackend) headKeys(ctx context.Context, ns string) ([]string, error) {
	found, err := b.scan(ctx, b.k.all(ns), b.k.headPattern(ns), "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range found {
		out = append(out, strings.TrimPrefix(k, b.k.head(ns, "")))
	}
	return out, nil
}

// Heads returns the heads matching q: the release keys from the index sets
// (one pipelined round trip, SINTER per namespace), then their heads (one
// more). Heads are checked against q again, since a write may come between
// the two reads. A namespace one of whose index sets is not a set is read
// by scanning its heads instead; a head that is not a hash is returned
// with Err.
func (b *redisBackend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	nss, err := b.namespaces(ctx, q.Namespace)
	if err != nil {
		return nil, err
	}
	type cand struct{ ns, key string }
	var cands []cand
	setsOf := map[string][]string{}
	if q.Key != "" {
		for _, ns := range nss {
			cands = append(cands, cand{ns, q.Key})
		}
	} else if len(nss) > 0 {
		cmds := make([]*goredis.StringSliceCmd, len(nss))
		for _, ns := range nss {
			setsOf[ns] = b.indexSets(ns, q)
		}
		err := b.again(ctx, func() error {
			pipe := b.c.Pipeline()
			for i, ns := range nss {
				if sets := setsOf[ns]; len(sets) == 1 {
					cmds[i] = pipe.SMembers(ctx, sets[0])
				} else {
					cmds[i] = pipe.SInter(ctx, sets...)
				}
			}
			_, _ = pipe.Exec(ctx)
			return firstError(cmds)
		})
		if err != nil {
			return nil, err
		}
		for i, ns := range nss {
			keys, err := b.indexMembers(ctx, ns, cmds[i], setsOf)
			if err != nil {
				return nil, err
			}
			for _, key := range keys {
				cands = append(cands, cand{ns, key})
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.MapStringStringCmd, len(cands))
	err = b.again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, c := range cands {
			cmds[i] = pipe.HGetAll(ctx, b.k.head(c.ns, c.key))
		}
		_, _ = pipe.Exec(ctx)
		return firstError(cmds)
	})
	if err != nil {
		return nil, err
	}
	var out []*driver.Head
	for i, c := range cands {
		m, err := cmds[i].Result()
		if err != nil { // the head is not a hash (firstError let only that through)
			out = append(out, wrongTypeHead(c.ns, c.key))
			continue
		}
		if len(m) == 0 {
			if q.Key == "" && setsOf[c.ns] != nil {
				b.prune(ctx, c.ns, c.key, setsOf[c.ns])
			}
			continue
		}
		h, _, _ := parseHead(c.ns, c.key, m)
		if h.Err == nil && !q.Matches(h) {
			continue
		}
		out = append(out, h)
	}
	driver.SortHeads(out)
	return out, nil
}

// wrongTypeHead is the head of key in ns when its key holds something else
// than a hash: corrupt, its name taken from the key.
func wrongTypeHead(ns, key string) *driver.Head {
	name, version, _ := driver.ParseKey(key)
	return &driver.Head{Namespace: ns, Key: key, Name: name, Version: version,
		Err: fmt.Errorf("release %q in namespace %q: %w: its head is not a Redis hash", key, ns, driver.ErrCorrupt)}
}

// prune removes key from sets if its head does not exist (an index entry a
// Delete could not remove, because the head's labels were unreadable).
// Best effort: a failure only leaves the entry for the next read.
func (b *redisBackend) prune(ctx context.Context, ns, key string, sets []string) {
	ks := append([]string{b.k.head(ns, key)}, sets...)
	if err := pruneScript.Run(ctx, b.c, ks, key).Err(); err != nil {
		b.log("helmstore: redis: removing the stale index entry of %q in namespace %q: %v", key, ns, err)
	}
}

// parseHead builds a head from its stored hash. A field that does not parse
// sets h.Err (wrapping driver.ErrCorrupt), so one damaged release does not
// hide the others; rev is the head's write token, created its creation
// time as stored. The summary is not read (List reads it: parseSummary).
func parseHead(ns, key string, m map[string]string) (h *driver.Head, rev, created string) {
	x, problems := indexOf(m)
	h, p := parseIndex(ns, key, x)
	problems = append(problems, p...)
	h.Body = []byte(m[fBody])
	for _, f := range headPartFields {
		if _, ok := m[f]; !ok {
			problems = append(problems, fmt.Sprintf("field %s is missing", f))
		}
	}
	for _, p := range []struct {
		f string
		d *driver.Digest
	}{{fChart, &h.Chart}, {fValues, &h.Values}, {fManifest, &h.Manifest}, {fVBase, &h.ValuesBase}, {fMBase, &h.ManifestBase}} {
		d, err := driver.ParseDigest(m[p.f])
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s digest: %v", p.f, err))
			continue
		}
		*p.d = d
	}
	setProblems(h, problems)
	return h, m[fRev], x.v[iCreated]
}

// parseIndex builds a head from the index fields of x, returning what does
// not parse or is missing.
func parseIndex(ns, key string, x *index) (h *driver.Head, problems []string) {
	h = &driver.Head{Namespace: ns, Key: key, Name: x.v[iName], Status: x.v[iStatus], Owner: x.v[iOwner]}
	// Every write stores every field (empty for none): one missing is
	// damage (a missing labels field would read as no labels).
	for i, f := range headIndexFields {
		if !x.has[i] {
			problems = append(problems, fmt.Sprintf("field %s is missing", f))
		}
	}
	num := func(i int) int64 {
		s := x.v[i]
		if s == "" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q is not a number", indexItems[i], s))
		}
		return n
	}
	h.Version = int(num(iVersion))
	h.CreatedAt = num(iCreated)
	h.ModifiedAt = num(iModified)
	if l := x.v[iLabels]; l != "" && l != "{}" {
		if err := json.Unmarshal([]byte(l), &h.Labels); err != nil {
			h.Labels = nil
			problems = append(problems, fmt.Sprintf("labels: %v", err))
		}
	}
	return h, problems
}

// setProblems sets h.Err to the damage problems describe, if any.
func setProblems(h *driver.Head, problems []string) {
	if len(problems) > 0 {
		h.Err = fmt.Errorf("release %q in namespace %q: %w: %s", h.Key, h.Namespace, driver.ErrCorrupt, strings.Join(problems, "; "))
	}
}

// headPartFields are the fields of a head that only Heads reads (List
// reads rev and the index field).
var headPartFields = []string{fChart, fValues, fManifest, fVBase, fMBase, fBody}

// headFields returns the hash fields of h, with created as given (an Update
// keeps the stored one), and its summary if it has one (the engine sets it
// on every write).
func headFields(h *driver.Head, created string) ([]interface{}, error) {
	labels := []byte("{}")
	if len(h.Labels) > 0 {
		var err error
		if labels, err = json.Marshal(h.Labels); err != nil {
			return nil, err
		}
	}
	mod := ""
	if h.ModifiedAt != 0 {
		mod = strconv.FormatInt(h.ModifiedAt, 10)
	}
	items := []string{h.Name, strconv.Itoa(h.Version), h.Status, h.Owner, created, mod, string(labels)}
	if h.HasSummary {
		items = append(items, h.ChartName, h.ChartVersion, h.AppVersion, h.Updated, h.Description)
	}
	return []interface{}{
		fIndex, packIndex(items...),
		fChart, h.Chart.String(), fValues, h.Values.String(), fManifest, h.Manifest.String(),
		fVBase, h.ValuesBase.String(), fMBase, h.ManifestBase.String(), fBody, string(h.Body),
	}, nil
}

// Parts reads the frames of refs in one pipelined round trip. A part that
// is not a hash is absent, as one not stored.
func (b *redisBackend) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	out := make(map[driver.Digest][]byte, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	cmds := make([]*goredis.StringCmd, len(refs))
	err := b.again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, r := range refs {
			cmds[i] = pipe.HGet(ctx, b.k.part(r.Namespace, r.Digest), pFrame)
		}
		_, _ = pipe.Exec(ctx)
		return firstError(cmds)
	})
	if err != nil {
		return nil, err
	}
	for i, r := range refs {
		f, err := cmds[i].Bytes()
		if err != nil {
			continue // not stored, or not a hash
		}
		out[r.Digest] = f
		b.known.add(r.Namespace, r.Digest)
	}
	return out, nil
}

// members returns the members of set in ns; where it is not a set, the
// suffixes after ns's tag and strip of the keys matching pattern (found by
// scanning).
func (b *redisBackend) members(ctx context.Context, ns string, cmd *goredis.StringSliceCmd, pattern, strip string) ([]string, error) {
	got, err := cmd.Result()
	if !isWrongType(err) {
		return got, nil
	}
	found, err := b.scan(ctx, b.k.all(ns), pattern, "")
	if err != nil {
		return nil, err
	}
	for i, k := range found {
		found[i] = strings.TrimPrefix(k, b.k.tag(ns)+strip)
	}
	return found, nil
}

// Stats counts the heads and parts of ns ("": every namespace). A head or
// part that is not a hash counts as stored, with no bytes; where the set
// of releases or of parts is not a set, the keys are found by scanning.
func (b *redisBackend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	nss, err := b.namespaces(ctx, ns)
	if err != nil || len(nss) == 0 {
		return s, err
	}
	headCmds := make([]*goredis.StringSliceCmd, len(nss))
	partCmds := make([]*goredis.StringSliceCmd, len(nss))
	err = b.again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, n := range nss {
			headCmds[i] = pipe.SMembers(ctx, b.k.all(n))
			partCmds[i] = pipe.SMembers(ctx, b.k.parts(n))
		}
		_, _ = pipe.Exec(ctx)
		return errors.Join(firstError(headCmds), firstError(partCmds))
	})
	if err != nil {
		return s, err
	}
	heads := make([][]string, len(nss))
	parts := make([][]string, len(nss))
	for i, n := range nss {
		if heads[i], err = b.members(ctx, n, headCmds[i], b.k.headPattern(n), "h:"); err != nil {
			return s, err
		}
		if parts[i], err = b.members(ctx, n, partCmds[i], b.k.partPattern(n), "p:"); err != nil {
			return s, err
		}
		s.Releases += len(heads[i])
	}
	var sizes []*goredis.IntCmd
	var infos []*goredis.SliceCmd
	err = b.again(ctx, func() error {
		sizes, infos = sizes[:0], infos[:0]
		pipe := b.c.Pipeline()
		for i, n := range nss {
			for _, key := range heads[i] {
				sizes = append(sizes, pipe.HStrLen(ctx, b.k.head(n, key), fBody), pipe.HStrLen(ctx, b.k.head(n, key), fLabels))
			}
			for _, d := range parts[i] {
				key := b.k.tag(n) + "p:" + d
				infos = append(infos, pipe.HMGet(ctx, key, pKind, pSize))
				sizes = append(sizes, pipe.HStrLen(ctx, key, pFrame))
			}
		}
		if len(sizes) == 0 {
			return nil
		}
		_, _ = pipe.Exec(ctx)
		return errors.Join(firstError(sizes), firstError(infos))
	})
	if err != nil {
		return s, err
	}
	// sizes holds two head sizes per head, then one frame size per part,
	// namespace by namespace; infos one per part. A command on a key of
	// the wrong type has a zero value.
	pi, si := 0, 0
	for i := range nss {
		for range heads[i] {
			s.HeadBytes += sizes[si].Val() + sizes[si+1].Val()
			si += 2
		}
		for range parts[i] {
			v := infos[pi].Val()
			pi++
			if len(v) == 2 {
				if kind, ok := v[0].(string); ok {
					s.Parts[kind]++
				}
				if z, ok := v[1].(string); ok {
					n, _ := strconv.ParseInt(z, 10, 64)
					s.RawPartBytes += n
				}
			}
			s.PartBytes += sizes[si].Val()
			si++
		}
	}
	return s, nil
}

// indexMembers returns the release keys cmd, the members of namespace
// ns's index sets setsOf[ns] (their intersection or union), read. An index
// set that is not a set (damaged) is logged and ns's releases are found by
// scanning instead; setsOf[ns] is then cleared, so that nothing is pruned
// from it. The other errors of cmd were returned by firstError.
func (b *redisBackend) indexMembers(ctx context.Context, ns string, cmd *goredis.StringSliceCmd, setsOf map[string][]string) ([]string, error) {
	keys, err := cmd.Result()
	if !isWrongType(err) {
		return keys, nil
	}
	b.log("helmstore: redis: an index set of namespace %q is not a set: finding its releases by scanning", ns)
	setsOf[ns] = nil
	return b.headKeys(ctx, ns)
}
