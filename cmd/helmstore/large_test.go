package main_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	release3 "helm.sh/helm/v3/pkg/release"
	driver3 "helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// TestMoveLarge is the move docs/migrate.md shows: 200 releases x 10 revisions
// of the realistic large fixture (a 2.2 MB kube-prometheus-stack-like
// release, each revision a values-only upgrade), written by Helm 3's own
// Secrets driver, moved to postgres by the helmstore binary, killed
// (SIGKILL) a quarter of the way and rerun, verified, deleted from
// Secrets, and moved back; every revision back in Secrets must be the one
// that left (the same JSON and labels). It logs each command's output and
// time. It runs with HELMSTORE_BENCH_LARGE=1 (more than an hour on 2
// cores, and ~3 GB of etcd: give go test -timeout 3h); without it, with 4
// releases x 3 revisions.
func TestMoveLarge(t *testing.T) {
	releases, revisions, kill := 4, 3, 1
	if os.Getenv(benchmarks.LargeEnv) == "1" {
		releases, revisions, kill = 200, 10, 50
	}
	ns := fmt.Sprintf("move-%dx%d", releases, revisions)
	k := kubeenv.Kube(t)
	cs := namespace(t, k, ns)
	start := time.Now()
	seedStack(t, cs, ns, releases, revisions)
	t.Logf("seeded %d x %d revisions through Helm's Secrets driver in %v", releases, revisions, time.Since(start).Round(time.Second))
	pg := sqlenv.Postgres(t)
	to := []string{"migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns}

	// Killed once a quarter of the releases are reported moved.
	start = time.Now()
	killAfter(t, k, to, kill)
	t.Logf("$ helmstore %s\n(killed with SIGKILL after %d releases were reported, %v)", strings.Join(shown(to), " "), kill, time.Since(start).Round(time.Second))

	// The rerun completes it, finding what the killed run moved present.
	rep := run(t, k, to)
	if !strings.Contains(rep, fmt.Sprintf("%d releases, %d revisions in namespace %q:", releases, releases*revisions, ns)) ||
		strings.Contains(rep, " 0 present") {
		t.Errorf("the rerun's summary does not count every revision, or finds none of the killed run's present:\n%s", rep)
	}
	run(t, k, []string{"verify", "--driver", "postgres", "--connection", pg, "-n", ns})
	run(t, k, []string{"stats", "--driver", "postgres", "--connection", pg, "-n", ns})

	// Out of Secrets, and back.
	before := digests(t, k, ns, "secret", "")
	if len(before) != releases*revisions {
		t.Fatalf("Secrets holds %d revisions, want %d", len(before), releases*revisions)
	}
	run(t, k, append(to, "--delete-source"))
	if left := digests(t, k, ns, "secret", ""); len(left) != 0 {
		t.Fatalf("after --delete-source Secrets still holds %d revisions", len(left))
	}
	run(t, k, []string{"migrate", "--from", "postgres", "--from-connection", pg, "--to", "secret", "-n", ns})
	after := digests(t, k, ns, "secret", "")
	if len(after) != len(before) {
		t.Errorf("back in Secrets: %d revisions, want %d", len(after), len(before))
	}
	for key, d := range before {
		if after[key] != d {
			t.Errorf("%s came back to Secrets different from what left", key)
		}
	}
}

// run runs the helmstore binary with args, fails the test unless it
// succeeds, logs the command, its output and its time, and returns the
// output.
func run(t *testing.T, k *kubeenv.Server, args []string) string {
	t.Helper()
	start := time.Now()
	out, err := command(k, args...).CombinedOutput()
	took := time.Since(start).Round(10 * time.Millisecond)
	t.Logf("$ helmstore %s    # %v\n%s", strings.Join(shown(args), " "), took, out)
	if err != nil {
		t.Fatalf("helmstore %s: %v", args[0], err)
	}
	return string(out)
}

// shown is args with connection strings left out, as docs/migrate.md shows a
// command (the connection string comes from the environment there).
func shown(args []string) []string {
	var s []string
	for i := 0; i < len(args); i++ {
		if strings.HasSuffix(args[i], "connection") {
			i++
			continue
		}
		s = append(s, args[i])
	}
	return s
}

// digests reads every revision of ns from a store and returns the SHA-256
// of each one's JSON and labels, by storage key.
func digests(t *testing.T, k *kubeenv.Server, ns, driver, conn string) map[string][32]byte {
	t.Helper()
	s, err := migrate.Open(ctx(t), driver, conn, k.Getter(kubeenv.Admin, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	revs, err := s.Revisions(ctx(t), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	d := make(map[string][32]byte, len(revs))
	for _, r := range revs {
		rls, err := s.Get(ctx(t), r)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		raw, err := json.Marshal(struct {
			Release any
			Labels  map[string]string
		}{rls, rls.Labels})
		if err != nil {
			t.Fatal(err)
		}
		d[r.Key()] = sha256.Sum256(raw)
	}
	return d
}

// seedStack writes releases x revisions of the realistic large fixture to
// ns through Helm 3's own Secrets driver, as a Helm 3 tool upgrading each
// release revisions-1 times leaves them: the last deployed, the others
// superseded.
func seedStack(t *testing.T, cs kubernetes.Interface, ns string, releases, revisions int) {
	t.Helper()
	d := driver3.NewSecrets(cs.CoreV1().Secrets(ns))
	stack := fixture.NewStack(1)
	for i := range releases {
		name := fmt.Sprintf("stack-%03d", i)
		for v := 1; v <= revisions; v++ {
			rls := stack.Release(name, ns, v)
			if v < revisions {
				rls.Info.Status = release3.StatusSuperseded
			}
			if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v), rls); err != nil {
				t.Fatal(err)
			}
		}
	}
}
