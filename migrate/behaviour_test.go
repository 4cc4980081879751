package migrate_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// TestWritesDuringMove: a Helm tool upgrading a release (with a history
// limit that deletes its oldest revision) and installing another while a
// move runs loses nothing: the move's later passes copy the new
// revisions, replace the one the upgrade superseded and remove the one
// it deleted, and the destination ends as the source.
func TestWritesDuringMove(t *testing.T) {
	const ns = "mig-w"
	k := cluster(t, ns)
	cfg := helmConfig(t, k, ns)
	install(t, cfg, ns, "app", 3, nil)
	install(t, cfg, ns, "other", 2, nil)
	secrets := open(t, k, "secret", "")
	postgres := open(t, k, "postgres", sqlenv.Postgres(t))

	wrote := false
	rep, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns, Parallel: 1, Progress: func(ev migrate.Event) {
		// After the first pass has copied both releases.
		if wrote || ev.Revision.Name != "other" || !ev.Last {
			return
		}
		wrote = true
		up := action.NewUpgrade(cfg)
		up.Namespace, up.MaxHistory, up.WaitStrategy = ns, 3, kube.HookOnlyStrategy
		if _, err := up.Run("app", demoChart("0.3.0"), map[string]any{"data": "during"}); err != nil {
			t.Errorf("upgrade during the move: %v", err)
		}
		install(t, cfg, ns, "late", 1, nil)
	}})
	if err != nil {
		t.Fatal(err)
	}
	src, dst := snapshot(t, secrets, ns), snapshot(t, postgres, ns)
	if _, ok := src[ns+"/sh.helm.release.v1.app.v1"]; ok {
		t.Fatal("the history limit kept app v1: the test does not test removal")
	}
	wantSame(t, "postgres after a move with writes", src, dst)
	if rep.Passes != 3 || rep.Copied != 7 || rep.Removed != 1 || rep.Replaced != 1 {
		t.Errorf("report %+v: want 3 passes, 7 copied (5, then app v4 and late v1), 1 removed (app v1), 1 replaced (app v3, superseded)", rep)
	}
}

// TestPending: a release whose latest revision is pending is refused,
// naming it, unless AllowPending.
func TestPending(t *testing.T) {
	const ns = "mig-p"
	k := cluster(t, ns)
	put(t, k, ns, release(ns, "app", 1, rcommon.StatusDeployed))
	put(t, k, ns, release(ns, "app", 2, rcommon.StatusPendingUpgrade))
	put(t, k, ns, release(ns, "calm", 1, rcommon.StatusDeployed))
	secrets := open(t, k, "secret", "")
	postgres := open(t, k, "postgres", sqlenv.Postgres(t))
	_, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns})
	if !errors.Is(err, migrate.ErrPending) {
		t.Fatalf("move of a pending release: %v, want ErrPending", err)
	}
	if n := len(snapshot(t, postgres, ns)); n != 0 {
		t.Fatalf("a refused move wrote %d revisions", n)
	}
	rep, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns, AllowPending: true})
	if err != nil || rep.Copied != 3 {
		t.Fatalf("move with AllowPending: %+v, %v", rep, err)
	}
}

// TestDiffers: a revision present in the destination and different stops
// the move (nothing after it is hidden: the error names it) unless
// Overwrite, which replaces it; dry runs plan and write nothing.
func TestDiffers(t *testing.T) {
	const ns = "mig-d"
	k := cluster(t, ns)
	for v := 1; v <= 3; v++ {
		put(t, k, ns, release(ns, "app", v, rcommon.StatusSuperseded))
	}
	secrets := open(t, k, "secret", "")
	postgres := open(t, k, "postgres", sqlenv.Postgres(t))
	other := release(ns, "app", 2, rcommon.StatusSuperseded)
	other.Info.Description = "written elsewhere"
	if err := postgres.Create(ctx(t), ns, other); err != nil {
		t.Fatal(err)
	}
	plan, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(actions(plan.Plan)) != "[copy check copy]" {
		t.Errorf("dry run plan %v, want [copy check copy]", actions(plan.Plan))
	}
	if n := len(snapshot(t, postgres, ns)); n != 1 {
		t.Fatalf("a dry run wrote: %d revisions", n)
	}
	if _, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns}); !errors.Is(err, migrate.ErrDiffers) {
		t.Fatalf("move over a different revision: %v, want ErrDiffers", err)
	}
	rep, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns, Overwrite: true})
	if err != nil || rep.Replaced != 1 {
		t.Fatalf("move with Overwrite: %+v, %v", rep, err)
	}
	wantSame(t, "after Overwrite", snapshot(t, secrets, ns), snapshot(t, postgres, ns))
}

// TestDeleteSourceKeepsUnverified: DeleteSource deletes only what the
// destination holds equal, keeps the rest and says so, several releases
// at once; its dry run plans each release in order, oldest revision first.
func TestDeleteSourceKeepsUnverified(t *testing.T) {
	const ns = "mig-x"
	k := cluster(t, ns)
	names := []string{"app", "b0", "b1", "b2", "b3", "b4", "b5"}
	for _, name := range names {
		for v := 1; v <= 3; v++ {
			put(t, k, ns, release(ns, name, v, rcommon.StatusSuperseded))
		}
	}
	secrets := open(t, k, "secret", "")
	postgres := open(t, k, "postgres", sqlenv.Postgres(t))
	if _, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Delete(ctx(t), migrate.Revision{Namespace: ns, Name: "app", Version: 2}); err != nil {
		t.Fatal(err)
	}
	changed := release(ns, "app", 3, rcommon.StatusDeployed)
	if err := postgres.Update(ctx(t), ns, changed); err != nil {
		t.Fatal(err)
	}
	opts := migrate.Options{Namespace: ns, Parallel: 3}

	dry := opts
	dry.DryRun = true
	plan, err := migrate.DeleteSource(ctx(t), secrets, postgres, dry)
	if !errors.Is(err, migrate.ErrNotMoved) || plan.Removed != 0 {
		t.Fatalf("DeleteSource dry run: %+v, %v; want nothing removed and ErrNotMoved", plan, err)
	}
	var got, want []string
	for _, ev := range plan.Plan {
		got = append(got, fmt.Sprintf("%s v%d %v", ev.Revision.Name, ev.Revision.Version, ev.Action))
	}
	for _, name := range names {
		for v := 1; v <= 3; v++ {
			a := migrate.Remove
			if name == "app" && v > 1 {
				a = migrate.Check
			}
			want = append(want, fmt.Sprintf("%s v%d %v", name, v, a))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("dry run plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(snapshot(t, secrets, ns)); n != 3*len(names) {
		t.Fatalf("the dry run left %d revisions in Secrets, want %d", n, 3*len(names))
	}

	rep, err := migrate.DeleteSource(ctx(t), secrets, postgres, opts)
	if wantRemoved := 3*len(names) - 2; !errors.Is(err, migrate.ErrNotMoved) || rep.Removed != wantRemoved {
		t.Fatalf("DeleteSource: %+v, %v; want %d removed and ErrNotMoved", rep, err, wantRemoved)
	}
	if !strings.Contains(err.Error(), "2 revisions") {
		t.Errorf("DeleteSource: %v; want it to name the 2 revisions kept", err)
	}
	left := snapshot(t, secrets, ns)
	if len(left) != 2 || left[ns+"/sh.helm.release.v1.app.v2"] == nil || left[ns+"/sh.helm.release.v1.app.v3"] == nil {
		t.Errorf("Secrets left: %d revisions, want app v2 and v3", len(left))
	}
}

func actions(evs []migrate.Event) []migrate.Action {
	var out []migrate.Action
	for _, e := range evs {
		out = append(out, e.Action)
	}
	return out
}

// release is a small revision of name in ns.
func release(ns, name string, v int, status rcommon.Status) *rspb.Release {
	return &rspb.Release{
		Name: name, Namespace: ns, Version: v,
		Info:     &rspb.Info{Status: status, Description: fmt.Sprintf("revision %d", v)},
		Chart:    demoChart("0.1.0"),
		Config:   map[string]any{"data": fmt.Sprint(v)},
		Manifest: fmt.Sprintf("kind: ConfigMap\nmetadata:\n  name: %s-%d\n", name, v),
		Labels:   map[string]string{"team": "x"},
	}
}

// put writes rls with Helm's own Secrets driver.
func put(t testing.TB, k *kubeenv.Server, ns string, rls *rspb.Release) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", rls.Name, rls.Version)
	if err := helmdriver.NewSecrets(cs.CoreV1().Secrets(ns)).Create(key, rls); err != nil {
		t.Fatal(err)
	}
}

// TestMoveStorageNamespace: releases stored as Flux stores them (Helm's
// Secrets driver in the storage namespace flux-system, the releases' own
// namespace another) move to postgres into flux-system, each with its own
// namespace as written, and back into flux-system's Secrets, equal.
func TestMoveStorageNamespace(t *testing.T) {
	const storage = "mig-flux"
	k := cluster(t, storage)
	for v := 1; v <= 2; v++ {
		put(t, k, storage, release("apps", "app", v, rcommon.StatusSuperseded))
	}
	put(t, k, storage, release("web", "db", 1, rcommon.StatusDeployed))
	secrets := open(t, k, "secret", "")
	postgres := open(t, k, "postgres", sqlenv.Postgres(t))
	src := snapshot(t, secrets, storage)
	if rep, err := migrate.Run(ctx(t), secrets, postgres, migrate.Options{Namespace: storage}); err != nil || rep.Copied != 3 {
		t.Fatalf("move to postgres: %+v, %v; want 3 copied", rep, err)
	}
	dst := snapshot(t, postgres, storage)
	wantSame(t, "postgres after the move", src, dst)
	if got := dst[storage+"/sh.helm.release.v1.db.v1"]; got == nil || got.Namespace != "web" {
		t.Errorf("db in postgres's %s: %v; want its own namespace web kept", storage, got)
	}
	for _, ns := range []string{"apps", "web"} {
		if revs, err := postgres.Revisions(ctx(t), ns, ""); err != nil || len(revs) != 0 {
			t.Errorf("postgres's %s holds %v (%v); want nothing: the releases are stored in %s", ns, revs, err, storage)
		}
	}
	if _, err := migrate.DeleteSource(ctx(t), secrets, postgres, migrate.Options{Namespace: storage}); err != nil {
		t.Fatal(err)
	}
	if rep, err := migrate.Run(ctx(t), postgres, secrets, migrate.Options{Namespace: storage}); err != nil || rep.Copied != 3 {
		t.Fatalf("move back to Secrets: %+v, %v; want 3 copied", rep, err)
	}
	wantSame(t, "Secrets after the move back", src, snapshot(t, secrets, storage))
}
