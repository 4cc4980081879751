package castest

import (
	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/internal/casprobe"
)

// Probe returns what a test reaches of b (internal/casprobe): its hooks,
// the object store under it, its background commits, its pending timeout.
func Probe(b *cas.Backend) *casprobe.Probe { return casprobe.Of(b) }

// ObjectStore returns the object store b runs on.
func ObjectStore(b *cas.Backend) cas.ObjectStore { return Probe(b).Store.(cas.ObjectStore) }

// WaitCommits returns once no background work of b (a commit, a rollback)
// is running.
func WaitCommits(b *cas.Backend) { Probe(b).WaitCommits() }
