// Package drivertest is a conformance suite for Helm storage drivers, in the
// spirit of testing/fstest and Go CDK's drivertest: every helmstore backend
// runs it, and a third party can run it against its own driver.
//
// It runs twice, through each of helmstore's faces: on the stores the
// harness gives (Helm 3's face, package helm3) and on the same backends
// through Helm 4's (package helm4), with Helm 4's Memory driver as the
// oracle and Helm 4's action package for the flows (see Run). It checks,
// against a fresh store for each part:
//  1. every method's contract (errors, labels, namespaces, bad input);
//  2. a seeded differential test: thousands of random operations applied to
//     the store and to Helm's own Memory driver, compared after every step;
//  3. Helm action flows (install, upgrades with MaxHistory, rollback,
//     uninstall, list across namespaces) through the face's Helm's action
//     package (helm.sh/helm/v3/pkg/action, helm.sh/helm/v4/pkg/action),
//     compared with the same flow on that Helm's Memory driver;
//  4. a release of at least 32 MiB of JSON;
//  5. concurrency: racing creates of one key, concurrent upgrades;
//  6. part reuse and collection, through Store.Stats;
//  7. races: all-namespaces List while a release sharing parts comes and
//     goes in another namespace, Query racing Update, 16 goroutines
//     upgrading one release on one store and on a store each;
//  8. hostile input: what every backend must accept and refuse alike
//     (label limits, values too deep to read back, empty query values,
//     names and namespaces no write accepts);
//  9. damaged stored data (flipped, truncated, swapped, missing, bombs),
//     through the backend's Tamperer: driver.ErrCorrupt for that release
//     only, which stays deletable; and a part many releases share, damaged
//     in each way the Tamperer (and its Reshaper) can, then carried by new
//     releases: their Create succeeds, and once a read has found the
//     damage, a write that carries the part heals it: every release reads
//     back whole from the stored copy, and still does after the new ones
//     are deleted;
//  10. values-only upgrades (stored as deltas by helmstore's engine):
//     revisions deleted in various orders, by another store, concurrently
//     with upgrades; every revision left reads back whole, and nothing is
//     left once the last is deleted;
//  11. last writer wins: an Update from a stale read (on another store too)
//     succeeds and is what every store then reads; 16 writers updating one
//     release at once, on one store and on a store each, all succeed and
//     leave exactly one of their releases, whole;
//  12. reserved labels: a custom label under helmstore.io/ is refused on
//     Create and Update with an error naming the release and the label,
//     and nothing is stored;
//  13. lost replies (Harness.Proxied): the reply to each message of a
//     Create, an Update and a Delete lost in turn after the service applied
//     it: nil or driver.ErrUnavailable, the write whole or not at all with
//     exact part counts, and a second attempt answering for what is stored;
//  14. data loss (Harness.Wipe): every write after the data is wiped
//     behind the store's back is seen by every view, from that store and a
//     fresh one;
//  15. damage to the shape of records (a Tamperer that is a Reshaper):
//     driver.ErrCorrupt for the releases it touches only, within the
//     deadline and bounded memory, deletable;
//  16. two stores writing in turns over one set of data, one reopened now
//     and then: every answer as Helm's Memory driver's, exact part counts;
//  17. deadlines (Harness.Proxied): Open, operations and Close through a
//     blackholed network path give up within their bound with
//     driver.ErrUnavailable;
//  18. access denied (Harness.Denied): a store with credentials or rights
//     the service refuses gets driver.ErrAccessDenied, never "not found"
//     nor driver.ErrUnavailable, and changes nothing;
//  19. confinement (Harness.Confined): a store whose credentials are
//     confined to one namespace works there, never returns a release of
//     another, is refused a Create there, and changes nothing there; and
//     (Harness.Overreach) what such a user tries with the service itself
//     (editing what readers of every namespace trust, observing the whole
//     service, watching other namespaces' writes) is refused, leaves every
//     all-namespaces read whole or failing (never missing a release), and
//     tells it nothing of another namespace;
//  20. collection: Collect (helm3's, helm4's), run again and again by another store
//     while releases sharing parts are upgraded and uninstalled (and after
//     each lost reply), removes nothing a release or a write in flight
//     uses: exact part counts after.
//
// and, once, on the Helm 4 run:
//  21. Helm 4 releases (the Helm 4 face alone): every field only Helm 4
//     has (ApplyMethod, Info.RollbackRevision, the chart's and its files'
//     mod times), times in any zone, a release given as value or pointer,
//     read back deep-equal to what Helm 4's own Secrets driver gives;
//     anything but a v1 release refused with helm4.ErrUnsupportedRelease,
//     never a panic, and nothing stored;
//  22. cross-version: one backend under both faces, against Helm 3's and
//     Helm 4's Secrets drivers over one set of Secrets: written through
//     either Helm and read through the other (on one store and on a
//     reopened one), a Helm 3 update of a Helm 4 release (which loses
//     what only Helm 4 has, as with Helm's drivers) and the reverse, List,
//     Query and Delete across the faces.
//
// A backend provides a Harness: how to open a new store, and, for the
// tests that need them, how to reopen one over the same data (Reopen),
// damage what it stored (Tamper, a Tamperer, and a Reshaper for the shape
// of records), reach it through a proxy the suite controls (Proxied),
// erase its data (Wipe), open it with credentials the service refuses
// (Denied) and with credentials confined to namespaces (Confined), and what
// such credentials can try beyond a store (Overreach). ConnectionStrings
// builds the Open and Reopen of a backend opened by connection string.
package drivertest

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// Namespaces are the namespaces the suite (Run) and RunAtRest write to: a
// harness whose store needs a namespace to exist before anything is written
// there (crsplit's: a Kubernetes namespace) makes them first.
var Namespaces = []string{helm3.DefaultNamespace, "team-a", "team-b", storageNamespace, "legacy", "plain", "sec-c", "sec-d"}

// Harness tells the suite how to get stores.
type Harness struct {
	// Open returns a new, empty store. The suite closes it when the test
	// ends (on the Helm 4 run it closes the Helm 4 store it put on the same
	// backend instead, which closes the backend). Stores from different Open
	// calls must not see each other.
	Open func(t *testing.T) helm3.Store

	// LargeReleaseBytes is the JSON size of the large-release test
	// (default 32 MiB, at most 4 MiB under go test -short).
	LargeReleaseBytes int

	// Ops is the number of operations of the differential test (default
	// 3000, at most 300 under go test -short; HELMSTORE_DIFF_OPS
	// overrides).
	Ops int

	// Seed seeds the differential test (default 1; HELMSTORE_DIFF_SEED
	// overrides, to reproduce a failure reported with its seed).
	Seed uint64

	// Reopen returns another store over the same data as s, with its own
	// connections and part cache and opts applied, as a second process
	// would open it. The race tests need it (they are skipped without it),
	// as does the cross-version test's read through another store.
	Reopen func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store

	// Tamper returns a Tamperer over the data of s. The damage tests need
	// it (they are skipped without it).
	Tamper func(t *testing.T, s helm3.Store) Tamperer

	// Proxied reopens a store through an address map the suite controls
	// (see the type). The lost-reply and deadline tests need it.
	Proxied Proxied

	// Wipe erases the stored data behind the stores' backs (see the type).
	// The data-loss tests need it.
	Wipe Wipe

	// Denied opens a store over the same data as s with credentials or
	// rights the service refuses (see the type). The access-denied test
	// needs it.
	Denied Denied

	// Confined opens a store over the same data as s with credentials
	// confined to some namespaces (see the type). The confinement test
	// needs it.
	Confined Confined

	// Overreach returns what a user confined to a namespace can try with
	// the service beyond a store's operations (see the type). The
	// overreach test needs it.
	Overreach Overreach

	// Parallel says that the stores Open returns are independent of each
	// other (and Wipe, if set, wipes only the store it is given): Run then
	// runs its tests in parallel. Stores on one shared database, server or
	// cluster are not independent.
	Parallel bool

	// on is the face Run runs the tables through (nil: Helm 3's).
	on *face
}

// Run runs the whole suite through each face: as subtests "Helm3", on the
// stores the harness gives, and "Helm4", on the same backends through the
// Helm 4 face (package helm4; the harness's stores must be helmstore's,
// from helm3.Open or helm3.New, or the Helm 4 run is skipped). Both runs
// share the tables, which are written in Helm 3's types: on the Helm 4 run
// releases cross to Helm 4's types and back by field copy, its sentinels are
// checked as Helm 4's, its oracle is Helm 4's Memory driver and the action
// flows run through Helm 4's action package. The harness's hooks are given
// the stores they returned, on either run. With Harness.Parallel the two
// runs, and their tests, run in parallel.
func Run(t *testing.T, h Harness) {
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			h.parallel(t)
			hf := h.onFace(f)
			for _, c := range append(append([]suiteTest{}, suite...), f.only...) {
				t.Run(c.name, func(t *testing.T) {
					hf.parallel(t)
					if c.measures {
						measuring.Lock()
						defer measuring.Unlock()
					} else {
						measuring.RLock()
						defer measuring.RUnlock()
					}
					c.test(t, hf)
				})
			}
		})
	}
}

// measuring lets the suite's tests that bound what reads allocate
// (suiteTest.measures) run alone among the suite's tests of the test
// binary, which otherwise run in parallel (Harness.Parallel, or two
// conformance runs at once): runtime.MemStats counts the whole process.
var measuring sync.RWMutex

// suite is the table every face runs (face.only adds a face's own tests).
var suite = []suiteTest{
	{name: "Contract", test: testContract},
	{name: "Differential", test: testDifferential},
	{name: "ActionFlows", test: testActionFlows},
	{name: "LargeRelease", test: testLargeRelease},
	{name: "Concurrency", test: testConcurrency},
	{name: "PartReuse", test: testPartReuse},
	{name: "Races", test: testRaces},
	{name: "Hostile", test: testHostile},
	{name: "Damage", test: testDamage, measures: true},
	{name: "DamagedCopy", test: testDamagedCopy},
	{name: "DamagedSharedPart", test: testDamagedSharedPart},
	{name: "Deltas", test: testDeltas, measures: true},
	{name: "LastWriterWins", test: testLastWriterWins},
	{name: "ReservedLabels", test: testReservedLabels},
	{name: "LostReply", test: testLostReply},
	{name: "Collect", test: testCollect},
	{name: "DataLoss", test: testDataLoss},
	{name: "Shapes", test: testShapes, measures: true},
	{name: "TwoStores", test: testTwoStores},
	{name: "Deadlines", test: testDeadlines},
	{name: "AccessDenied", test: testAccessDenied},
	{name: "Confinement", test: testConfinement},
	{name: "Overreach", test: testOverreach},
	{name: "Summaries", test: testSummaries},
	{name: "StorageNamespace", test: testStorageNamespace},
}

// parallel marks t parallel when the harness's stores are independent.
func (h Harness) parallel(t *testing.T) {
	if h.Parallel {
		t.Parallel()
	}
}

func (h Harness) open(t *testing.T) helm3.Store {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func (h Harness) ops() int {
	if v, err := strconv.Atoi(os.Getenv("HELMSTORE_DIFF_OPS")); err == nil && v > 0 {
		return v
	}
	n := 3000
	if h.Ops > 0 {
		n = h.Ops
	}
	if testing.Short() {
		n = min(n, shortOps) // make check's inner loop
	}
	return n
}

// shortOps bounds the differential test's operations under go test -short.
const shortOps = 300

func (h Harness) seed() uint64 {
	if v, err := strconv.ParseUint(os.Getenv("HELMSTORE_DIFF_SEED"), 10, 64); err == nil {
		return v
	}
	if h.Seed != 0 {
		return h.Seed
	}
	return 1
}

func (h Harness) largeBytes() int {
	n := 32 << 20
	if h.LargeReleaseBytes > 0 {
		n = h.LargeReleaseBytes
	}
	if testing.Short() {
		n = min(n, 4<<20) // make check's inner loop
	}
	return n
}

func isSystemLabel(k string) bool {
	switch k {
	case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		return true
	}
	return false
}
