// Package readcount counts the reads of a backend that a summary listing
// must not make: of parts (Backend.Parts) and of heads with their bodies
// (Backend.Heads). The conformance suite and the listing benchmarks put it
// between a store and its backend.
package readcount

import (
	"context"
	"sync/atomic"

	"github.com/helmstore/helmstore/driver"
)

// Backend is a driver.Backend that counts its Parts and Heads calls.
type Backend struct {
	driver.Backend
	parts, heads atomic.Int64
}

// New returns be, counting.
func New(be driver.Backend) *Backend { return &Backend{Backend: be} }

// Parts counts the call and reads the parts from the wrapped backend.
func (c *Backend) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	c.parts.Add(1)
	return c.Backend.Parts(ctx, refs)
}

// Heads counts the call and reads the heads from the wrapped backend.
func (c *Backend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	c.heads.Add(1)
	return c.Backend.Heads(ctx, q)
}

// Counts returns how many Parts and Heads calls were made so far.
func (c *Backend) Counts() (parts, heads int64) { return c.parts.Load(), c.heads.Load() }
