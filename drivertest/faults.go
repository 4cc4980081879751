package drivertest

import (
	"context"
	"errors"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// The fault, data-loss and reshape hooks of Harness. Each is optional: the
// tests that need one are skipped without it, saying so.

// ProxyFunc maps an address a store would dial ("host:port") to the address
// it must dial instead. The suite listens at the address it returns and
// forwards to the original, so it can lose a reply after the server applied
// the request, cut connections, or stop forwarding altogether (a blackholed
// network path).
type ProxyFunc func(addr string) string

// Proxied returns another store over the same data as s, as Harness.Reopen
// does (its own connections and part cache, opts applied), whose every
// connection to its service goes to proxy(addr) instead of addr, for every
// address addr it dials. Open's error is returned as it is (not fataled), so
// the suite can check that an Open through a dead path fails within its
// deadline. A backend with no network (memstore) leaves Harness.Proxied nil.
type Proxied func(t *testing.T, s helm3.Store, proxy ProxyFunc, opts ...helm3.Option) (helm3.Store, error)

// Wipe erases everything the backend of s stores, behind its back, as a
// server that restarts without persistence or is flushed would: Redis keys
// (the namespace registry included), SQL rows, Cosmos DB items, Kubernetes
// objects. Schema, tables and containers stay. Stores open on that data stay
// open and must go on working: every later write is visible in every view,
// from the store that made it and from a fresh one.
type Wipe func(t *testing.T, s helm3.Store)

// Shape is damage to how a backend stores a record rather than to the bytes
// of a frame: what a hand edit, a bad restore, another program sharing the
// database, or a hostile user with write access can leave.
type Shape string

const (
	// WrongType replaces a record, or one of its fields, by one of another
	// type: a Redis string where a hash or set was, a JSON field of another
	// type in a Cosmos DB item or a custom resource, an SQL value that does
	// not parse as its column's meaning.
	WrongType Shape = "wrong-type"
	// MissingField removes a field the backend writes and reads back (a
	// Redis hash field, an item or object field, an SQL value set NULL).
	MissingField Shape = "missing-field"
	// HugeCount sets a recorded count (chunks, references, members) to far
	// more than exists: 1<<30 unless the backend's field cannot hold it.
	HugeCount Shape = "huge-count"
	// HugeSize sets a recorded size (a part's size, a frame's length) to far
	// more than exists: 1<<40 unless the backend's field cannot hold it.
	HugeSize Shape = "huge-size"
)

// Shapes are every Shape, in the order the suite applies them.
var Shapes = []Shape{WrongType, MissingField, HugeCount, HugeSize}

// Target is what Reshape damages: a release's head, or a part.
type Target struct {
	// Namespace holds the record.
	Namespace string
	// Key is a release key: Reshape damages that release's head.
	Key string
	// Part is a part's digest as 64 hex digits (as in StoredHead), used
	// when Key is empty: Reshape damages that part (and its chunks).
	Part string
}

// ErrNoVariant is returned by Reshaper.Reshape when the backend has no i-th
// way of applying a shape to a target (i counts from 0): the suite stops
// there. A backend whose records cannot take a shape at all (an SQL column
// cannot hold a value of another type) returns it for i == 0.
var ErrNoVariant = errors.New("no such variant")

// Reshaper is implemented by a Tamperer that can damage the shape of stored
// records. The suite applies each Shape to a head, to a part shared by two
// releases and to a part of one release, variant by variant (i = 0, 1, ...
// until ErrNoVariant), each on fresh data, and checks that the releases the
// damage touches read as driver.ErrCorrupt (or whole, if the backend can
// tell the damage apart from the data), that every other release reads as
// before, that List and Query of the namespace and of all namespaces still
// answer, that each operation returns within its deadline with memory bounded
// by what was recorded at write time, and that the damaged releases stay
// deletable.
type Reshaper interface {
	// Reshape applies the i-th variant of shape to target and says what it
	// did ("head key replaced by a string", "part hash field refs set to
	// 'x'") for the test's log and failure messages.
	Reshape(ctx context.Context, target Target, shape Shape, i int) (string, error)
}
