package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/internal/testing/testenv/helmbin"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// inspectRevision is one revision seedInspect writes.
type inspectRevision struct {
	status rcommon.Status
	labels map[string]string
}

// seedInspect writes, with Helm's own Secrets driver, releases of every
// kind list, history, status and get show: several revisions, failed,
// uninstalled and pending ones, notes, hooks (a test hook that ran), custom
// labels, chart values, a release without values and one deployed in a
// time zone other than UTC. Names start with prefix, unique to ns.
func seedInspect(t *testing.T, k *kubeenv.Server, ns, prefix string) {
	t.Helper()
	cs := namespace(t, k, ns)
	d := helmdriver.NewSecrets(cs.CoreV1().Secrets(ns))
	web := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "web", Version: "1.2.0", AppVersion: "2.0"},
		Values:    map[string]any{"replicas": 1, "image": map[string]any{"repository": "nginx", "tag": "1.27"}},
		Templates: []*common.File{{Name: "templates/deploy.yaml", Data: []byte("kind: Deployment\n")}},
	}
	db := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "postgresql-long-chart-name", Version: "16.4.1", AppVersion: "17.2.0"}}
	base := time.Date(2026, 11, 3, 9, 30, 0, 123456789, time.UTC)
	hooks := []*rspb.Hook{
		{Name: prefix + "web-pre", Kind: "Job", Path: "web/templates/pre.yaml", Manifest: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pre",
			Events: []rspb.HookEvent{rspb.HookPreInstall, rspb.HookPreUpgrade}, Weight: 5, DeletePolicies: []rspb.HookDeletePolicy{rspb.HookBeforeHookCreation}},
		{Name: prefix + "web-test", Kind: "Pod", Path: "web/templates/tests/test.yaml", Manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test",
			Events: []rspb.HookEvent{rspb.HookTest}, LastRun: rspb.HookExecution{StartedAt: base.Add(time.Hour), CompletedAt: base.Add(time.Hour + 3*time.Second), Phase: rspb.HookPhaseSucceeded}},
	}
	write := func(name string, c *chart.Chart, revs []inspectRevision, mod func(v int, r *rspb.Release)) {
		for i, rv := range revs {
			v := i + 1
			r := &rspb.Release{
				Name: name, Namespace: ns, Version: v, Chart: c, Labels: rv.labels,
				Info: &rspb.Info{Status: rv.status, Description: fmt.Sprintf("Upgrade %d complete", v),
					FirstDeployed: base, LastDeployed: base.Add(time.Duration(v*len(name)) * time.Minute)},
				Config:   map[string]any{"replicas": v, "image": map[string]any{"tag": fmt.Sprintf("1.%d", v)}},
				Manifest: fmt.Sprintf("---\n# Source: %s/templates/deploy.yaml\nkind: Deployment # %s v%d\n", c.Metadata.Name, name, v),
			}
			if mod != nil {
				mod(v, r)
			}
			if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	team := map[string]string{"team": "web"}
	write(prefix+"web", web, []inspectRevision{{rcommon.StatusSuperseded, team}, {rcommon.StatusSuperseded, team}, {rcommon.StatusDeployed, team}}, func(v int, r *rspb.Release) {
		r.Hooks = hooks
		r.Info.Notes = fmt.Sprintf("  Visit http://web.example/ (revision %d)\n\n", v)
	})
	write(prefix+"db", db, []inspectRevision{{rcommon.StatusSuperseded, nil}, {rcommon.StatusFailed, map[string]string{"team": "data"}}}, func(v int, r *rspb.Release) {
		if v == 2 {
			r.Info.Description = "Upgrade \"db\" failed: timed out waiting for the condition"
		}
	})
	write(prefix+"old", web, []inspectRevision{{rcommon.StatusUninstalled, team}}, func(_ int, r *rspb.Release) {
		r.Info.Deleted = base.Add(48 * time.Hour)
		r.Info.Description = "Uninstallation complete"
	})
	write(prefix+"job", db, []inspectRevision{{rcommon.StatusDeployed, nil}, {rcommon.StatusPendingUpgrade, nil}}, nil)
	write(prefix+"zone", web, []inspectRevision{{rcommon.StatusDeployed, nil}}, func(_ int, r *rspb.Release) {
		r.Config = nil
		r.Info.LastDeployed = time.Date(2026, 7, 14, 22, 5, 9, 7000, time.FixedZone("", 2*3600))
		r.Info.FirstDeployed = time.Time{}
	})
}

// TestInspect seeds releases in Helm's Secrets, moves them into postgres
// with helmstore migrate, and checks that helmstore list, history, status
// and get print on postgres byte for byte what the real helm 3 prints on
// the Secrets.
func TestInspect(t *testing.T) {
	const nsA, nsB = "inspect-a", "inspect-b"
	k := kubeenv.Kube(t)
	seedInspect(t, k, nsA, "insp-")
	seedInspect(t, k, nsB, "inspb-")
	pg := sqlenv.Postgres(t)
	for _, ns := range []string{nsA, nsB} {
		if out, err := command(k, "migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns, "--allow-pending").CombinedOutput(); err != nil {
			t.Fatalf("migrate -n %s: %v\n%s", ns, err, out)
		}
	}
	helm := helmbin.Helm(t, 3)
	home := t.TempDir()
	helmEnv := append(os.Environ(), "HELM_DRIVER=secret", "KUBECONFIG="+k.Kubeconfig,
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"))
	filter := []string{"-A", "--filter", "^insp"}
	cases := [][]string{
		{"list"}, {"list", "-o", "json"}, {"list", "-o", "yaml"}, {"list", "-a"}, {"list", "-a", "-o", "json"}, {"list", "-a", "-o", "yaml"},
		{"list", "-q"}, {"list", "-q", "-o", "json"}, {"list", "-q", "-o", "yaml"}, {"list", "-a", "-q"},
		append([]string{"list"}, filter...), append([]string{"list", "-o", "json"}, filter...), append([]string{"list", "-a", "-o", "yaml"}, filter...),
		append([]string{"list", "-a", "-l", "team=web"}, filter...), append([]string{"list", "-a", "-l", "team!=web"}, filter...),
		{"list", "--filter", "w.b|zone"}, {"list", "--filter", "^nothing"}, {"list", "--filter", "^nothing", "-o", "json"}, {"list", "--filter", "^nothing", "-q", "-o", "yaml"},
		{"list", "--superseded"}, {"list", "--superseded", "--failed"}, {"list", "--pending"}, {"list", "--uninstalled", "-o", "json"}, {"list", "--deployed"},
		{"list", "-a", "-d"}, {"list", "-a", "-d", "-r"}, {"list", "-a", "-r"}, {"list", "-a", "--max", "2", "--offset", "1"}, {"list", "-a", "--offset", "9"},
		{"list", "-a", "--no-headers"}, {"list", "-a", "--time-format", "2006-01-02 15:04:05Z0700"},
		{"history", "insp-web"}, {"history", "insp-web", "-o", "json"}, {"history", "insp-web", "-o", "yaml"}, {"history", "insp-web", "--max", "2"},
		{"history", "insp-db"}, {"history", "insp-old", "-o", "json"}, {"history", "insp-web", "--max", "0", "-o", "json"},
		{"status", "insp-web"}, {"status", "insp-web", "-o", "json"}, {"status", "insp-web", "-o", "yaml"}, {"status", "insp-web", "--revision", "1"},
		{"status", "insp-db", "--show-desc"}, {"status", "insp-old"}, {"status", "insp-old", "-o", "json"}, {"status", "insp-zone"}, {"status", "insp-zone", "-o", "yaml"},
		{"get", "values", "insp-web"}, {"get", "values", "insp-web", "-o", "json"}, {"get", "values", "insp-web", "-o", "yaml"}, {"get", "values", "insp-web", "--revision", "1"},
		{"get", "values", "insp-web", "-a"}, {"get", "values", "insp-web", "-a", "-o", "json"}, {"get", "values", "insp-zone"}, {"get", "values", "insp-zone", "-o", "json"},
		{"get", "manifest", "insp-web"}, {"get", "manifest", "insp-web", "--revision", "2"},
		{"get", "notes", "insp-web"}, {"get", "notes", "insp-web", "--revision", "1"}, {"get", "notes", "insp-db"},
		{"get", "hooks", "insp-web"}, {"get", "hooks", "insp-db"},
		{"get", "all", "insp-web"}, {"get", "all", "insp-web", "--revision", "2"}, {"get", "all", "insp-zone"}, {"get", "all", "insp-db"},
	}
	// The cases only read: they run a few at a time (each is two
	// processes that mostly wait on start-up and the servers).
	inParallel(len(cases), func(i int) {
		args := append(slices.Clone(cases[i]), "-n", nsA)
		hcmd := exec.Command(helm, append(args, "--kube-context", kubeenv.Admin)...)
		hcmd.Env = helmEnv
		want, err := hcmd.Output()
		if err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr(err))
			return
		}
		got, err := command(k, append(args, "--driver", "postgres", "--connection", pg, "--helm", "3")...).Output()
		if err != nil {
			t.Errorf("helmstore %s: %v\n%s", strings.Join(args, " "), err, stderr(err))
			return
		}
		if string(got) != string(want) {
			t.Errorf("helmstore %s differs from helm 3:\n%s", strings.Join(args, " "), firstDiff(string(got), string(want)))
		} else if testing.Verbose() {
			t.Logf("helm %s:\n%s", strings.Join(args, " "), want)
		}
	})
	// The golden comparisons above would pass on empty output: check some.
	out, _ := command(k, "list", "-a", "-n", nsA, "--driver", "postgres", "--connection", pg, "--helm", "3").Output()
	for _, want := range []string{"insp-web", "2026-11-03 09:54:00.123456789 +0000 UTC", "2026-07-14 22:05:09.000007 +0200 +0200", "web-1.2.0",
		"postgresql-long-chart-name-16.4.1", "pending-upgrade", "uninstalled", "failed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("helmstore list -a does not show %q:\n%s", want, out)
		}
	}
}

// inParallel calls f(0), ..., f(n-1), four at a time, and returns when
// every call has.
func inParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// stderr is what a command that failed with err wrote to its standard
// error.
func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// firstDiff shows the first line where got and want differ, and both
// whole.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d:\n got  %q\n want %q\n--- got:\n%s\n--- want:\n%s", i+1, gl, wl, got, want)
		}
	}
	return "(equal)"
}
