package castest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
)

// ReshapeData is the data one variant of ReshapeAll damages, in a
// namespace of its own: a release App whose chart another release shares
// (Shared), App's values (AppValues), a release whose chart is chunked
// (LargeChart), an upgrade of App whose values are a delta its head
// embeds (UpValues) and, on a backend that chunks the head itself, a
// release whose head is chunked (ChunkedHead).
type ReshapeData struct {
	Namespace string
	// Keys are the keys of every release stored.
	Keys []string
	// App and ChunkedHead are release keys ("": none).
	App, ChunkedHead string
	// Shared, AppValues, LargeChart and UpValues are part digests.
	Shared, AppValues, LargeChart, UpValues string
	// Uses names, for each digest, the releases whose heads reference
	// it (bases of deltas included).
	Uses map[string]map[string]bool
}

// Use records that the head of release k references the parts digests
// name ("" is skipped).
func (d *ReshapeData) Use(k string, digests ...string) {
	if d.Uses == nil {
		d.Uses = map[string]map[string]bool{}
	}
	for _, dg := range digests {
		if dg == "" {
			continue
		}
		if d.Uses[dg] == nil {
			d.Uses[dg] = map[string]bool{}
		}
		d.Uses[dg][k] = true
	}
}

// ReshapeAll applies every variant of every shape (drivertest.Shapes) tp
// has to the head of App and of ChunkedHead (if set), and to the parts
// Shared, LargeChart, AppValues and UpValues, each variant on data of its
// own (data(n), for the n-th; done, if set, is called on it once it is
// checked), and checks each with check, given the releases damaged: the
// head's, or every release using the part. It returns how many variants
// it checked. The conformance suite's Shapes reach neither chunked heads
// nor chunked parts.
func ReshapeAll(t *testing.T, tp drivertest.Reshaper, data func(n int) ReshapeData, check func(d ReshapeData, damaged map[string]bool, what string), done func(d ReshapeData)) int {
	t.Helper()
	if done == nil {
		done = func(ReshapeData) {}
	}
	n, checked := 0, 0
	none := map[string]bool{} // targets the backend's data has not
	for _, shape := range drivertest.Shapes {
		for _, name := range reshapeTargets {
			for i := 0; !none[name]; i++ {
				d := data(n)
				n++
				target := d.target(name)
				if target.Key == "" && target.Part == "" {
					none[name] = true // no chunked head on this backend
					done(d)
					break
				}
				what, err := tp.Reshape(context.Background(), target, shape, i)
				if errors.Is(err, drivertest.ErrNoVariant) {
					done(d)
					break
				}
				if err != nil {
					t.Fatalf("%s %s %d: %v", shape, name, i, err)
				}
				checked++
				damaged := d.Uses[target.Part]
				if target.Key != "" {
					damaged = map[string]bool{target.Key: true}
				}
				check(d, damaged, fmt.Sprintf("%s %s: %s", shape, name, what))
				done(d)
			}
		}
	}
	return checked
}

// reshapeTargets name what ReshapeAll damages (ReshapeData.target).
var reshapeTargets = []string{"head", "chunked-head", "shared-part", "chunked-part", "values-part", "embedded-part"}

// target returns the target of d that name (of reshapeTargets) names.
func (d ReshapeData) target(name string) drivertest.Target {
	t := drivertest.Target{Namespace: d.Namespace}
	switch name {
	case "head":
		t.Key = d.App
	case "chunked-head":
		t.Key = d.ChunkedHead
	case "shared-part":
		t.Part = d.Shared
	case "chunked-part":
		t.Part = d.LargeChart
	case "values-part":
		t.Part = d.AppValues
	case "embedded-part":
		t.Part = d.UpValues
	}
	return t
}
