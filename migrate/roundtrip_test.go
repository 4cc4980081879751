package migrate_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/cosmosenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// TestRoundTrip installs releases with Helm's actions on Helm's Secrets
// driver (a real API server), moves them to postgres, crsplit, redis and
// cosmos and back to Secrets, checking every store holds each revision as
// the Secrets did, reruns that find everything present, DeleteSource, and
// that Helm's actions go on with the releases moved back.
func TestRoundTrip(t *testing.T) {
	nss := []string{"mig-a", "mig-b"}
	k := cluster(t, nss...)
	cfgA, cfgB := helmConfig(t, k, "mig-a"), helmConfig(t, k, "mig-b")
	install(t, cfgA, "mig-a", "app", 4, map[string]string{"team": "a"})
	install(t, cfgA, "mig-a", "db", 2, nil)
	install(t, cfgB, "mig-b", "web", 3, nil)
	un := action.NewUninstall(cfgB)
	un.KeepHistory, un.WaitStrategy = true, kube.HookOnlyStrategy
	if _, err := un.Run("web"); err != nil {
		t.Fatal(err)
	}
	failed(t, cfgB, "mig-b", "bad")

	secrets := open(t, k, "secret", "")
	orig := map[string]*rspb.Release{}
	for _, ns := range nss {
		for key, r := range snapshot(t, secrets, ns) {
			orig[key] = r
		}
	}
	if len(orig) != 10 {
		t.Fatalf("Helm's Secrets hold %d revisions, want 10", len(orig))
	}
	if r := orig["mig-b/sh.helm.release.v1.web.v3"]; r.Info.Status.String() != "uninstalled" {
		t.Fatalf("web v3 is %s, want uninstalled", r.Info.Status)
	}
	if r := orig["mig-b/sh.helm.release.v1.bad.v1"]; r.Info.Status.String() != "failed" {
		t.Fatalf("bad v1 is %s, want failed", r.Info.Status)
	}

	postgres := open(t, k, "postgres", sqlenv.Postgres(t))
	crsplit := open(t, k, "crsplit", "")
	redis := open(t, k, "redis", withParam(redisenv.URL(t), "key_prefix="+testenv.UniqueName("mig")))
	cosmos := open(t, k, "cosmos", "AccountEndpoint="+cosmosenv.Endpoint(t)+"/;AccountKey="+cosmosenv.Key+
		";Database=helmstore-test;Container="+testenv.UniqueName("mig")+";InsecureSkipVerify=true;AllowWeakConsistency=true;")

	move := func(from, to migrate.Store, wantCopied, wantPresent int) {
		t.Helper()
		var copied, present int
		for _, ns := range nss {
			rep, err := migrate.Run(ctx(t), from, to, migrate.Options{Namespace: ns})
			if err != nil {
				t.Fatalf("%s to %s, %s: %v", from.Name(), to.Name(), ns, err)
			}
			copied, present = copied+rep.Copied, present+rep.Present
			if rep.Passes != 2 || rep.Replaced != 0 || rep.Removed != 0 {
				t.Errorf("%s to %s: report %+v, want 2 passes and nothing replaced or removed", from.Name(), to.Name(), rep)
			}
		}
		if copied != wantCopied || present != wantPresent {
			t.Errorf("%s to %s: %d copied, %d present, want %d and %d", from.Name(), to.Name(), copied, present, wantCopied, wantPresent)
		}
		got := map[string]*rspb.Release{}
		for _, ns := range nss {
			for key, r := range snapshot(t, to, ns) {
				got[key] = r
			}
		}
		wantSame(t, to.Name(), orig, got)
	}
	move(secrets, postgres, 10, 0)
	move(secrets, postgres, 0, 10) // a rerun finds every revision present
	move(postgres, crsplit, 10, 0)
	move(crsplit, redis, 10, 0)
	move(redis, cosmos, 10, 0)

	for _, ns := range nss {
		rep, err := migrate.DeleteSource(ctx(t), secrets, postgres, migrate.Options{Namespace: ns})
		if err != nil {
			t.Fatalf("delete source %s: %v", ns, err)
		}
		if rep.Removed != rep.Revisions {
			t.Errorf("delete source %s: removed %d of %d", ns, rep.Removed, rep.Revisions)
		}
		if left := snapshot(t, secrets, ns); len(left) != 0 {
			t.Errorf("delete source %s: %d revisions left in Secrets", ns, len(left))
		}
	}
	move(cosmos, secrets, 10, 0)

	// Helm goes on with a release moved back: revision 5 supersedes 4.
	upgrade(t, cfgA, "mig-a", "app", "app-5")
	after := snapshot(t, secrets, "mig-a")
	if r := after["mig-a/sh.helm.release.v1.app.v5"]; r == nil || r.Info.Status.String() != "deployed" {
		t.Errorf("upgrade after the move back: revision 5 %v", r)
	}
	if r := after["mig-a/sh.helm.release.v1.app.v4"]; r.Info.Status.String() != "superseded" {
		t.Errorf("upgrade after the move back: revision 4 is %s, want superseded", r.Info.Status)
	}
}

// failed installs release name in ns with a manifest the server refuses:
// Helm stores it as failed.
func failed(t testing.TB, cfg *action.Configuration, ns, name string) {
	t.Helper()
	c := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "broken", Version: "0.0.1"},
		Templates: []*common.File{{Name: "templates/bad.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NOT_A_VALID_NAME\n")}},
	}
	in := action.NewInstall(cfg)
	in.Namespace, in.ReleaseName, in.WaitStrategy = ns, name, kube.HookOnlyStrategy
	if _, err := in.Run(c, nil); err == nil {
		t.Fatalf("install %s: no error for a ConfigMap the server refuses", name)
	}
}

// withParam adds a query parameter to a URL.
func withParam(u, p string) string {
	if strings.Contains(u, "?") {
		return u + "&" + p
	}
	return u + "?" + p
}

// TestOpenRefusesMemory: Helm's memory driver has nothing to move.
func TestOpenRefusesMemory(t *testing.T) {
	if _, err := migrate.Open(ctx(t), "memory", "", nil); err == nil {
		t.Fatal("Open(memory) succeeded")
	}
	if _, err := migrate.Open(ctx(t), "nosuch", "", nil); err == nil {
		t.Fatal("Open(nosuch) succeeded")
	}
}
