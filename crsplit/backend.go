package crsplit

import (
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/helmstore/helmstore/cas"
)

// Sizes that decide where bytes go. Base64 (how JSON carries bytes) adds a
// third, so a full chunk is about 800 KiB serialized: under MaxObjectBytes
// with room for metadata.
const (
	// ChunkBytes is the most frame bytes one Chunk object holds.
	ChunkBytes = 600 << 10
	// InlinePartBytes is the largest part frame kept inside its Chart,
	// Values or Manifest object. Larger frames go to Chunk objects, so
	// that adding or removing an owner (a write of the whole object) stays
	// cheap for the parts that are shared the most: charts, and the
	// keyframes every later revision's deltas reference (a 53 KB keyframe
	// manifest inline made each Create re-store it: 90 KB written per
	// values-only Create at 64 KiB, 20 KB at 8 KiB).
	InlinePartBytes = 8 << 10
	// InlineReleaseBytes is the largest release record frame (the
	// compressed head body) kept in its Release, about 512 KiB in base64;
	// larger frames are stored in Chunk objects.
	InlineReleaseBytes = 384 << 10
)

// PendingTimeout is how old a Release still marked pending must be before
// it is taken to be left by a writer that stopped: removed with the parts
// only it owned when incomplete, committed when complete.
const PendingTimeout = 10 * time.Minute

// newBackend returns the no-transaction protocol (package cas) over the
// Kubernetes API that c speaks to; Close waits at most closeTimeout for
// background commits (the store's operation timeout; 0: cas's default).
func newBackend(c *client, log func(string, ...interface{}), closeTimeout time.Duration) *cas.Backend {
	return cas.New(&kubeStore{c: c}, cas.Config{
		CloseTimeout:    closeTimeout,
		InlinePartBytes: InlinePartBytes,
		InlineBodyBytes: InlineReleaseBytes,
		ChunkBytes:      ChunkBytes,
		PendingTimeout:  PendingTimeout,
		HeadName:        releaseObjectName,
		Log:             log,
		// Missing rights or CRDs fail every cleanup alike: reported,
		// not left to a later cleanup that would fail the same way.
		Persistent: func(err error) bool {
			return errors.Is(err, ErrForbidden) || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrCRDsNotInstalled)
		},
	})
}

// joinSorted returns the label selector of terms, in a fixed order.
func joinSorted(terms []string) string {
	sort.Strings(terms)
	return strings.Join(terms, ",")
}
