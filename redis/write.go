package redis

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// errConflict is returned by a write that lost the compare-and-swap race
// (another writer changed the head between this writer's read and its
// script) more often than the retry policy allows: nothing was written.
var errConflict = fmt.Errorf("%w: the release kept changing under this write", driver.ErrConflict)

// minRecordTTL is the least time a write's reply is kept for a run of the
// same script sent again (writeScript).
const minRecordTTL = 5 * time.Minute

// recordTTL is how long a write's reply is kept, for a store whose
// operations are bounded by timeout (0: no bound): the same script is
// sent again only within its operation (by go-redis after a lost reply,
// or by again), so twice the bound, and at least minRecordTTL. Without a
// bound, resends start within failoverWindow plus one attempt of go-redis
// (max_retries+1 tries, each bounded by dial_timeout and read_timeout):
// about a minute with go-redis's defaults.
func recordTTL(timeout time.Duration) time.Duration {
	return max(minRecordTTL, 2*timeout)
}

// transientRetries and failoverWindow bound how often and for how long a
// command refused for now (transient), or in Cluster one that could not
// reach its node, is sent again: about as long as a Cluster failover
// takes (cluster-node-timeout, 15 s by default, and an election).
const (
	transientRetries = 400
	failoverWindow   = 20 * time.Second
)

// partOp is one change of a part's references by a write, or a rewrite
// of its stored copy.
type partOp struct {
	d     driver.Digest
	delta int          // +1, -1, or 0 for a part only rewritten (driver.Rewrites)
	part  *driver.Part // for +1 and 0: the part, whose frame is sent unless known (always if Rewrite)
}

// partOps returns the operations of a write that adds a reference to each
// part of add and rewrites each of rewrite (driver.Rewrites).
func partOps(add, rewrite []*driver.Part) []partOp {
	ops := make([]partOp, 0, len(add)+len(rewrite))
	for _, p := range add {
		ops = append(ops, partOp{d: p.Digest, delta: 1, part: p})
	}
	for _, p := range rewrite {
		ops = append(ops, partOp{d: p.Digest, part: p})
	}
	return ops
}

// write is one run of writeScript.
type write struct {
	op       string // "c", "u", "d"
	ns, key  string
	rev      string // the head's rev the writer read (u, d)
	fields   []interface{}
	rem, add []string // index sets
	parts    []partOp
}

// result is what the script answered.
type result struct {
	status  string // OK, EXISTS, NOTFOUND, CONFLICT, CORRUPT
	freed   []driver.Digest
	missing []driver.Digest
	what    string // CORRUPT: what is damaged
}

// corrupt is the error for a write the script refused because what it
// touches is damaged.
func (r *result) corrupt(w *write) error {
	return fmt.Errorf("release %q in namespace %q: %w: %s", w.key, w.ns, driver.ErrCorrupt, r.what)
}

func newRev() string {
	b := make([]byte, 12)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

// run runs w, sending again with their frames the parts the server says it
// lacks (the store's guess that they were stored was wrong).
func (b *redisBackend) run(ctx context.Context, w *write) (*result, error) {
	send := map[driver.Digest]bool{}
	for attempt := 0; ; attempt++ {
		res, err := b.runOnce(ctx, w, send)
		if err != nil || res.status != "MISSING" {
			return res, err
		}
		if attempt >= 2 {
			return nil, fmt.Errorf("the server still lacks parts %v after they were sent", res.missing)
		}
		for _, d := range res.missing {
			b.known.forget(w.ns, d)
			send[d] = true
		}
	}
}

func (b *redisBackend) runOnce(ctx context.Context, w *write, send map[driver.Digest]bool) (*result, error) {
	token := newRev() // the new rev, and the token of this run's record
	record := b.k.record(w.ns, token)
	ks := []string{b.k.head(w.ns, w.key), b.k.parts(w.ns), record}
	pos := map[string]int{ks[0]: 1, ks[1]: 2, ks[2]: 3}
	at := func(k string) string {
		i, ok := pos[k]
		if !ok {
			ks = append(ks, k)
			i = len(ks)
			pos[k] = i
		}
		return strconv.Itoa(i)
	}
	args := make([]interface{}, 0, 14+len(w.fields)+len(w.rem)+len(w.add)+7*len(w.parts))
	args = append(args, w.op, w.rev, token, w.key, w.ns, b.registryKey(w.ns), b.k.all(w.ns), b.k.head(w.ns, ""),
		b.recordTTL.Milliseconds(), len(w.fields)/2)
	args = append(args, w.fields...)
	args = append(args, len(w.rem))
	for _, s := range w.rem {
		args = append(args, at(s))
	}
	args = append(args, len(w.add))
	for _, s := range w.add {
		args = append(args, at(s))
	}
	args = append(args, len(w.parts))
	for _, p := range w.parts {
		var frame []byte
		kind, size, how := "", "0", "0"
		if p.part != nil {
			kind, size = p.part.Kind.String(), strconv.Itoa(p.part.Size)
			switch {
			case p.part.Rewrite:
				frame, how = p.part.Frame(), "2"
			case p.delta > 0 && (send[p.d] || !b.known.has(w.ns, p.d)):
				frame, how = p.part.Frame(), "1"
			}
		}
		args = append(args, at(b.k.part(w.ns, p.d)), p.d.String(), p.delta, how, kind, size, frame)
	}
	var reply []interface{}
	err := b.again(ctx, func() (err error) {
		reply, err = writeScript.Run(ctx, b.c, ks, args...).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	res, err := parseResult(reply)
	if err != nil {
		return nil, err
	}
	if res.status == "OK" {
		for _, p := range w.parts {
			if p.delta >= 0 {
				b.known.add(w.ns, p.d)
			}
		}
		for _, d := range res.freed {
			b.known.forget(w.ns, d)
		}
	}
	return res, nil
}

func parseResult(reply []interface{}) (*result, error) {
	bad := fmt.Errorf("unexpected reply from the write script: %.200v", reply)
	if len(reply) == 0 {
		return nil, bad
	}
	st, _ := reply[0].(string)
	res := &result{status: st}
	digest := func(v interface{}) (driver.Digest, error) {
		s, _ := v.(string)
		return driver.ParseDigest(s)
	}
	switch st {
	case "EXISTS", "NOTFOUND", "CONFLICT":
		return res, nil
	case "CORRUPT":
		if len(reply) > 1 {
			res.what, _ = reply[1].(string)
		}
		return res, nil
	case "MISSING":
		for _, v := range reply[1:] {
			d, err := digest(v)
			if err != nil {
				return nil, bad
			}
			res.missing = append(res.missing, d)
		}
		return res, nil
	case "OK":
	default:
		return nil, bad
	}
	for _, v := range reply[1:] {
		d, err := digest(v)
		if err != nil {
			return nil, bad
		}
		res.freed = append(res.freed, d)
	}
	return res, nil
}

// headSets returns the index sets h is a member of. Its labels are known
// only if they could be read.
func (b *redisBackend) headSets(h *driver.Head) []string {
	sets := []string{b.k.all(h.Namespace)}
	if h.Name != "" {
		sets = append(sets, b.k.name(h.Namespace, h.Name))
	}
	if h.Status != "" {
		sets = append(sets, b.k.status(h.Namespace, h.Status))
	}
	for k, v := range h.Labels {
		sets = append(sets, b.k.label(h.Namespace, k, v))
	}
	return sets
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

// digests returns the distinct digests h references.
func digests(h *driver.Head) map[driver.Digest]bool {
	out := map[driver.Digest]bool{}
	for _, r := range h.Parts() {
		out[r.Digest] = true
	}
	return out
}

// Create stores h and references its parts, storing those the namespace
// lacks, in one script.
func (b *redisBackend) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	add, _, err := driver.DiffParts(nil, h, parts)
	if err != nil {
		return err
	}
	fields, err := headFields(h, strconv.FormatInt(h.CreatedAt, 10))
	if err != nil {
		return err
	}
	w := &write{op: "c", ns: h.Namespace, key: h.Key, fields: fields, add: b.headSets(h), parts: partOps(add, nil)}
	res, err := b.run(ctx, w)
	if err != nil {
		return err
	}
	switch res.status {
	case "OK":
		return nil
	case "EXISTS":
		return driver.ErrReleaseExists
	case "CORRUPT":
		return res.corrupt(w)
	}
	return fmt.Errorf("unexpected reply %s from the write script", res.status)
}

// readHead returns the stored head of key in ns, its rev and its creation
// time as stored. A head that is not a hash is returned with Err, and
// wrongTypeRev as its rev.
func (b *redisBackend) readHead(ctx context.Context, ns, key string) (h *driver.Head, rev, created string, err error) {
	var m map[string]string
	err = b.again(ctx, func() (err error) {
		m, err = b.c.HGetAll(ctx, b.k.head(ns, key)).Result()
		return err
	})
	if isWrongType(err) {
		return wrongTypeHead(ns, key), wrongTypeRev, "", nil
	}
	if err != nil {
		return nil, "", "", err
	}
	if len(m) == 0 {
		return nil, "", "", driver.ErrReleaseNotFound
	}
	h, rev, created = parseHead(ns, key, m)
	return h, rev, created, nil
}

// retry waits before attempt (a write that lost a race), or says to give
// up: errConflict once the retries are spent, ctx's error when it ends.
func (b *redisBackend) retry(ctx context.Context, attempt int) error {
	if attempt >= b.retries {
		return errConflict
	}
	d := time.Duration(1+rand.IntN(1<<min(attempt, 5))) * time.Millisecond
	select {
	case <-ctx.Done():
		return errors.Join(errConflict, ctx.Err())
	case <-time.After(d):
		return nil
	}
}

// Update replaces the head of h.Key, keeping its creation time, and moves
// index entries and part references to what h has, in one script that
// applies only if the head is still the one read (else read again and
// retry: the last writer wins, whole).
func (b *redisBackend) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	for attempt := 0; ; attempt++ {
		old, rev, created, err := b.readHead(ctx, h.Namespace, h.Key)
		if err != nil {
			return err
		}
		fields, err := headFields(h, created)
		if err != nil {
			return err
		}
		oldSets, newSets := b.headSets(old), b.headSets(h)
		w := &write{op: "u", ns: h.Namespace, key: h.Key, rev: rev, fields: fields, rem: minus(oldSets, newSets), add: newSets}
		// The digests of a head that does not verify may be another
		// release's: its references are left as they are (a leak at worst)
		// and h's are all added.
		trusted := old
		if old.Err != nil || old.Verify() != nil {
			trusted = nil
		}
		add, drop, err := driver.DiffParts(trusted, h, parts)
		if err != nil {
			return err
		}
		w.parts = partOps(add, driver.Rewrites(h, add, parts))
		for _, r := range drop {
			w.parts = append(w.parts, partOp{d: r.Digest, delta: -1})
		}
		res, err := b.run(ctx, w)
		if err != nil {
			return err
		}
		switch res.status {
		case "OK":
			return nil
		case "NOTFOUND":
			return driver.ErrReleaseNotFound
		case "CORRUPT":
			return res.corrupt(w)
		case "CONFLICT":
			if err := b.retry(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("unexpected reply %s from the write script", res.status)
	}
}

// Delete removes the head of key in ns, its index entries and its part
// references (parts left without one go) in one script, returning the head
// and the frames of its parts have lacks, read before the script: the
// script applies only if the head still has the rev read, whose references
// keep those parts (content-addressed, so unchanged) stored until then. So
// the script's reply and its record hold no frames, however large the
// release. A head that does not verify is removed with its index entries
// only.
func (b *redisBackend) Delete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	for attempt := 0; ; attempt++ {
		old, rev, _, err := b.readHead(ctx, ns, key)
		if err != nil {
			return nil, nil, err
		}
		w := &write{op: "d", ns: ns, key: key, rev: rev, rem: b.headSets(old)}
		var frames map[driver.Digest][]byte
		if old.Verify() == nil {
			var read []driver.PartRef
			for d := range digests(old) {
				w.parts = append(w.parts, partOp{d: d, delta: -1})
				if !have(d) {
					read = append(read, driver.PartRef{Namespace: ns, Digest: d})
				}
			}
			if frames, err = b.Parts(ctx, read); err != nil {
				return nil, nil, err
			}
		}
		res, err := b.run(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		switch res.status {
		case "OK":
			return old, frames, nil
		case "NOTFOUND":
			return nil, nil, driver.ErrReleaseNotFound
		case "CORRUPT":
			return nil, nil, res.corrupt(w)
		case "CONFLICT":
			if err := b.retry(ctx, attempt); err != nil {
				return nil, nil, err
			}
			continue
		}
		return nil, nil, fmt.Errorf("unexpected reply %s from the write script", res.status)
	}
}
