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

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// redisBackend is backend.Backend over a go-redis UniversalClient.
type redisBackend struct {
	c   goredis.UniversalClient
	k   keys
	log func(format string, v ...interface{})
	// known remembers parts seen stored, so a write sends only the frames
	// the server is likely to lack (the script asks for any it does lack).
	known *knownParts
	// registered remembers the namespaces this store has added to the
	// namespace registry.
	regMu      sync.Mutex
	registered map[string]bool
	// retries bounds how often a write whose head changed between its read
	// and its script (another writer won) is tried again.
	retries int
}

var _ backend.Backend = (*redisBackend)(nil)

func newBackend(c goredis.UniversalClient, prefix string, log func(string, ...interface{})) *redisBackend {
	return &redisBackend{c: c, k: keys{prefix: prefix}, log: log, known: newKnownParts(4096), registered: map[string]bool{}, retries: 200}
}

// Close closes the client's connections.
func (b *redisBackend) Close() error { return b.c.Close() }

// namespaces returns ns, or for "" every namespace in the registry, sorted.
func (b *redisBackend) namespaces(ctx context.Context, ns string) ([]string, error) {
	if ns != "" {
		return []string{ns}, nil
	}
	var nss []string
	err := again(ctx, func() (err error) {
		nss, err = b.c.SMembers(ctx, b.k.namespaces()).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(nss)
	return nss, nil
}

// register adds ns to the namespace registry before the first write of this
// store to ns. It is a separate write (the registry is in its own slot), made
// before the release's: a crash between the two leaves a namespace listed
// that holds nothing, which readers skip; never a release that a read across
// namespaces cannot find.
func (b *redisBackend) register(ctx context.Context, ns string) error {
	b.regMu.Lock()
	done := b.registered[ns]
	b.regMu.Unlock()
	if done {
		return nil
	}
	if err := b.c.SAdd(ctx, b.k.namespaces(), ns).Err(); err != nil {
		return unavailable(err)
	}
	b.regMu.Lock()
	b.registered[ns] = true
	b.regMu.Unlock()
	return nil
}

// indexSets returns the index sets q selects by in ns (none: all of ns).
func (b *redisBackend) indexSets(ns string, q backend.Query) []string {
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

// Heads returns the heads matching q: the release keys from the index sets
// (one pipelined round trip, SINTER per namespace), then their heads (one
// more). Heads are checked against q again, since a write may come between
// the two reads.
func (b *redisBackend) Heads(ctx context.Context, q backend.Query) ([]*backend.Head, error) {
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
	} else {
		cmds := make([]*goredis.StringSliceCmd, len(nss))
		for _, ns := range nss {
			setsOf[ns] = b.indexSets(ns, q)
		}
		err := again(ctx, func() error {
			pipe := b.c.Pipeline()
			for i, ns := range nss {
				if sets := setsOf[ns]; len(sets) == 1 {
					cmds[i] = pipe.SMembers(ctx, sets[0])
				} else {
					cmds[i] = pipe.SInter(ctx, sets...)
				}
			}
			_, err := pipe.Exec(ctx)
			return err
		})
		if len(nss) > 0 && err != nil {
			return nil, err
		}
		for i, ns := range nss {
			for _, key := range cmds[i].Val() {
				cands = append(cands, cand{ns, key})
			}
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.MapStringStringCmd, len(cands))
	err = again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, c := range cands {
			cmds[i] = pipe.HGetAll(ctx, b.k.head(c.ns, c.key))
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []*backend.Head
	for i, c := range cands {
		m := cmds[i].Val()
		if len(m) == 0 {
			if q.Key == "" {
				b.prune(ctx, c.ns, c.key, setsOf[c.ns])
			}
			continue
		}
		h, _ := parseHead(c.ns, c.key, m)
		if h.Err == nil && !q.Matches(h) {
			continue
		}
		out = append(out, h)
	}
	backend.SortHeads(out)
	return out, nil
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
// sets h.Err (wrapping codec.ErrCorrupt), so one damaged release does not
// hide the others; rev is the head's write token.
func parseHead(ns, key string, m map[string]string) (h *backend.Head, rev string) {
	h = &backend.Head{Namespace: ns, Key: key, Name: m[fName], Status: m[fStatus], Owner: m[fOwner], Body: []byte(m[fBody])}
	var problems []string
	num := func(f string) int64 {
		s := m[f]
		if s == "" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q is not a number", f, s))
		}
		return n
	}
	h.Version = int(num(fVersion))
	h.CreatedAt = num(fCreated)
	h.ModifiedAt = num(fModified)
	if l := m[fLabels]; l != "" {
		if err := json.Unmarshal([]byte(l), &h.Labels); err != nil {
			h.Labels = nil
			problems = append(problems, fmt.Sprintf("labels: %v", err))
		}
	}
	for _, p := range []struct {
		f string
		d *codec.Digest
	}{{fChart, &h.Chart}, {fValues, &h.Values}, {fManifest, &h.Manifest}, {fVBase, &h.ValuesBase}, {fMBase, &h.ManifestBase}} {
		d, err := codec.ParseDigest(m[p.f])
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s digest: %v", p.f, err))
			continue
		}
		*p.d = d
	}
	if len(problems) > 0 {
		h.Err = fmt.Errorf("release %q in namespace %q: %w: %s", key, ns, codec.ErrCorrupt, strings.Join(problems, "; "))
	}
	return h, m[fRev]
}

// headFields returns the hash fields of h, with created as given (an Update
// keeps the stored one).
func headFields(h *backend.Head, created string) ([]interface{}, error) {
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
	return []interface{}{
		fName, h.Name, fVersion, strconv.Itoa(h.Version), fStatus, h.Status, fOwner, h.Owner,
		fCreated, created, fModified, mod, fLabels, string(labels),
		fChart, h.Chart.String(), fValues, h.Values.String(), fManifest, h.Manifest.String(),
		fVBase, h.ValuesBase.String(), fMBase, h.ManifestBase.String(), fBody, string(h.Body),
	}, nil
}

// Parts reads the frames of refs in one pipelined round trip.
func (b *redisBackend) Parts(ctx context.Context, refs []backend.PartRef) (map[codec.Digest][]byte, error) {
	out := make(map[codec.Digest][]byte, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	cmds := make([]*goredis.StringCmd, len(refs))
	err := again(ctx, func() error {
		pipe := b.c.Pipeline()
		for i, r := range refs {
			cmds[i] = pipe.HGet(ctx, b.k.part(r.Namespace, r.Digest), pFrame)
		}
		_, _ = pipe.Exec(ctx)
		for _, c := range cmds {
			if err := c.Err(); err != nil && !errors.Is(err, goredis.Nil) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, r := range refs {
		f, err := cmds[i].Bytes()
		if err != nil {
			if errors.Is(err, goredis.Nil) {
				continue
			}
			return nil, unavailable(err)
		}
		out[r.Digest] = f
		b.known.add(r.Namespace, r.Digest)
	}
	return out, nil
}

// Stats counts the heads and parts of ns ("": every namespace).
func (b *redisBackend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	nss, err := b.namespaces(ctx, ns)
	if err != nil {
		return s, err
	}
	if len(nss) == 0 {
		return s, nil
	}
	pipe := b.c.Pipeline()
	heads := make([]*goredis.StringSliceCmd, len(nss))
	parts := make([]*goredis.StringSliceCmd, len(nss))
	for i, n := range nss {
		heads[i] = pipe.SMembers(ctx, b.k.all(n))
		parts[i] = pipe.SMembers(ctx, b.k.parts(n))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return s, unavailable(err)
	}
	pipe = b.c.Pipeline()
	var sizes []*goredis.IntCmd
	var infos []*goredis.SliceCmd
	for i, n := range nss {
		for _, key := range heads[i].Val() {
			sizes = append(sizes, pipe.HStrLen(ctx, b.k.head(n, key), fBody), pipe.HStrLen(ctx, b.k.head(n, key), fLabels))
		}
		for _, d := range parts[i].Val() {
			key := b.k.tag(n) + "p:" + d
			infos = append(infos, pipe.HMGet(ctx, key, pKind, pSize))
			sizes = append(sizes, nil)
			sizes[len(sizes)-1] = pipe.HStrLen(ctx, key, pFrame)
		}
	}
	if len(sizes) == 0 {
		return s, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return s, unavailable(err)
	}
	for i := range nss {
		s.Releases += len(heads[i].Val())
	}
	// sizes holds two head sizes per head, then one frame size per part,
	// namespace by namespace; infos one per part.
	pi, si := 0, 0
	for i := range nss {
		for range heads[i].Val() {
			s.HeadBytes += sizes[si].Val() + sizes[si+1].Val()
			si += 2
		}
		for range parts[i].Val() {
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
