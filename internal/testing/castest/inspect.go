package castest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/helmstore/helmstore/driver"

	"github.com/helmstore/helmstore/cas"
)

// errGarbled is the Err of an object Garble damaged.
var errGarbled = fmt.Errorf("%w: the stored object does not decode (garbled)", driver.ErrCorrupt)

// The methods below look at and change the shared data directly, behind
// every process's back: they are never faulted, work on a dead process, and
// are not counted as calls.

// Objects returns a copy of every stored object of kind k (0: every kind),
// with its record, sorted by kind, namespace and name.
func (s *Store) Objects(k cas.Kind) []*cas.Object {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	var out []*cas.Object
	for ref, e := range s.d.objects {
		if k == 0 || ref.Kind == k {
			out = append(out, copyObject(e.obj, true))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// Len returns how many objects are stored, of every kind.
func (s *Store) Len() int {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return len(s.d.objects)
}

// Counts returns how many objects of each kind are stored.
func (s *Store) Counts() map[cas.Kind]int {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	out := map[cas.Kind]int{}
	for ref := range s.d.objects {
		out[ref.Kind]++
	}
	return out
}

// Dump describes every stored object, one line each (kind/ns/name, UID,
// version, labels, referrers, and a summary of its record), for a test to
// print when an invariant fails.
func (s *Store) Dump() string {
	var b strings.Builder
	for _, o := range s.Objects(0) {
		fmt.Fprintf(&b, "%s uid=%s v=%s", RefString(o.Ref()), o.UID, o.Version)
		if len(o.Labels) > 0 {
			keys := make([]string, 0, len(o.Labels))
			for k := range o.Labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString(" labels={")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(k + "=" + o.Labels[k])
			}
			b.WriteString("}")
		}
		if len(o.Referrers) > 0 {
			b.WriteString(" referrers=[")
			for i, r := range o.Referrers {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, "%s:%s", KindName(r.Kind), r.UID)
			}
			b.WriteString("]")
		}
		switch {
		case o.Head != nil:
			h := o.Head
			fmt.Fprintf(&b, " head{key=%s status=%s chart=%.8s values=%.8s manifest=%.8s vbase=%.8s mbase=%.8s body=%dB",
				h.Key, h.Status, h.Parts.Chart, h.Parts.Values, h.Parts.Manifest, h.Parts.ValuesBase, h.Parts.ManifestBase, len(h.Body))
			if h.BodyChunks != nil {
				fmt.Fprintf(&b, " bodychunks=%s×%d", h.BodyChunks.ID, h.BodyChunks.Count)
			}
			for _, e := range h.Embedded {
				fmt.Fprintf(&b, " embeds=%.8s:%dB", e.Digest, len(e.Data))
			}
			b.WriteString("}")
		case o.Part != nil:
			fmt.Fprintf(&b, " part{complete=%v chunks=%d data=%dB}", o.Part.Complete, o.Part.Chunks, len(o.Part.Data))
		case o.Chunk != nil:
			fmt.Fprintf(&b, " chunk{of=%s index=%d data=%dB}", o.Chunk.Of, o.Chunk.Index, len(o.Chunk.Data))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Age makes every stored object older by d (its Created earlier), and
// every object created from now on too: as if the store's clock had run d
// ahead of the protocol's. A test uses it to make what a dead writer left
// pending older than cas.Config.PendingTimeout without waiting.
func (s *Store) Age(d time.Duration) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	s.d.offset -= d
	for _, e := range s.d.objects {
		e.obj.Created = e.obj.Created.Add(-d)
		if e.prev != nil {
			e.prev.Created = e.prev.Created.Add(-d)
		}
	}
}

// Garble damages the stored object ref names so that reading it fails in
// the store itself: Get and List return it with Err set (wrapping
// driver.ErrCorrupt) and no record, as a store returns an object it cannot
// decode, until it is replaced or deleted. ErrNotFound if there is none.
func (s *Store) Garble(ref cas.Ref) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	e := s.d.objects[ref]
	if e == nil {
		return fmt.Errorf("garble %s: %w", RefString(ref), cas.ErrNotFound)
	}
	e.garbled = true
	return nil
}

// Edit changes the stored object ref names in place with edit (its record,
// labels, referrers; not its kind or name), as a hand edit or a bad
// restore would, and gives it a new version. ErrNotFound if there is none.
func (s *Store) Edit(ref cas.Ref, edit func(o *cas.Object)) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	e := s.d.objects[ref]
	if e == nil {
		return fmt.Errorf("edit %s: %w", RefString(ref), cas.ErrNotFound)
	}
	o := copyObject(e.obj, true)
	edit(o)
	o.Kind, o.Namespace, o.Name, o.UID, o.Created = ref.Kind, ref.Namespace, ref.Name, e.obj.UID, e.obj.Created
	o.Version = s.d.next()
	e.prev, e.obj = e.obj, o
	return nil
}

// Remove deletes the object ref names behind every process's back (as a
// user with access to the service could). ErrNotFound if there is none.
func (s *Store) Remove(ref cas.Ref) error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.d.objects[ref] == nil {
		return fmt.Errorf("remove %s: %w", RefString(ref), cas.ErrNotFound)
	}
	delete(s.d.objects, ref)
	return nil
}

// IsInjected reports whether err comes from a fault a Plan injected (or a
// dead process), rather than from the protocol or the store's outcomes.
func IsInjected(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCrashed)
}
