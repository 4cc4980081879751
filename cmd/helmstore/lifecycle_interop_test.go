package main_test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	action3 "helm.sh/helm/v3/pkg/action"
	loader3 "helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/testing/testenv/helmbin"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// TestLifecycleInterleaving takes turns on one release in postgres:
// helmstore (Helm 4) installs it, a Go program upgrades it through
// helm3.Init, helmstore (Helm 3) upgrades it reusing those values, and a
// Go program rolls it back through helm4.Init; then a release the real
// helm 3 wrote to Secrets is moved into postgres and rolled back there by
// helmstore. Each step must see the one before (values, revisions) and
// leave the cluster's ConfigMap as that revision says.
func TestLifecycleInterleaving(t *testing.T) {
	const ns = "interleave"
	k := kubeenv.Kube(t)
	cs := namespace(t, k, ns)
	pg := sqlenv.Postgres(t)
	chartDir := demoChart(t, t.TempDir(), "0.1.0")
	t.Setenv("HELM_DRIVER_POSTGRES_CONNECTION_STRING", pg)
	hs := func(args ...string) string {
		t.Helper()
		out, err := command(k, append(args, "-n", ns, "--driver", "postgres")...).CombinedOutput()
		if err != nil {
			t.Fatalf("helmstore %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	greeting := func(rel, want string) {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx(t), rel+"-values", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(cm.Data["values"], `"greeting":"`+want+`"`) {
			t.Errorf("ConfigMap %s-values has %s, want greeting %q", rel, cm.Data["values"], want)
		}
	}
	hs("install", "il", chartDir, "--set", "greeting=one")

	cfg3 := new(action3.Configuration)
	if err := helm3.Init(cfg3, k.Getter(kubeenv.Admin, ns), ns, "postgres", t.Logf); err != nil {
		t.Fatal(err)
	}
	ch3, err := loader3.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	up3 := action3.NewUpgrade(cfg3)
	up3.Namespace = ns
	if _, err := up3.Run("il", ch3, map[string]any{"greeting": "two"}); err != nil {
		t.Fatalf("Helm 3 program's upgrade of helmstore's release: %v", err)
	}
	greeting("il", "two")
	hs("upgrade", "il", chartDir, "--helm", "3", "--reuse-values", "--set", "replicas=3")
	greeting("il", "two")

	cfg4 := action.NewConfiguration()
	if err := helm4.Init(cfg4, k.Getter(kubeenv.Admin, ns), ns, "postgres"); err != nil {
		t.Fatal(err)
	}
	rb := action.NewRollback(cfg4)
	rb.Version, rb.WaitStrategy = 1, kube.HookOnlyStrategy
	if err := rb.Run("il"); err != nil {
		t.Fatalf("Helm 4 program's rollback: %v", err)
	}
	greeting("il", "one")
	hist := hs("history", "il")
	for _, want := range []string{"1       \t", "Install complete", "4       \t", "Rollback to 1", "superseded"} {
		if !strings.Contains(hist, want) {
			t.Errorf("helmstore history after the turns does not show %q:\n%s", want, hist)
		}
	}
	vals := hs("get", "values", "il", "--revision", "3", "-o", "json")
	if !strings.Contains(vals, `"greeting":"two"`) || !strings.Contains(vals, `"replicas":3`) {
		t.Errorf("revision 3 (helmstore --helm 3 --reuse-values over the Go program's) has values %s, want greeting two and replicas 3", vals)
	}

	// A release of the real helm 3, moved from Secrets, rolled back here.
	helm3 := helmbin.Helm(t, 3)
	env := append(newLifecycleFixture(t).helmEnv(3, k.Kubeconfig), "HELM_DRIVER=secret")
	for _, args := range [][]string{{"install", "mig", chartDir, "--set", "greeting=first"}, {"upgrade", "mig", chartDir, "--set", "greeting=second"}} {
		c := exec.Command(helm3, append(args, "-n", ns, "--kube-context", kubeenv.Admin)...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := command(k, "migrate", "--from", "secret", "--to", "postgres", "-n", ns, "mig").CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	if out := hs("rollback", "mig", "1"); out != "Rollback was a success! Happy Helming!\n" {
		t.Errorf("helmstore rollback printed %q", out)
	}
	greeting("mig", "first")
	s, err := migrate.Open(ctx(t), "postgres", pg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rel, err := s.Get(ctx(t), migrate.Revision{Namespace: ns, Name: "mig", Version: 3})
	if err != nil || rel.Info.Description != "Rollback to 1" || rel.Info.Status != rcommon.StatusDeployed {
		t.Errorf("revision 3 of the migrated release: %v, %+v; want deployed, Rollback to 1", err, rel)
	}
}

// TestLifecycleBadInput checks errors users make beyond the golden
// scenarios against the real helm 4 (and helmstore --helm 4 on postgres):
// a release in another namespace, a release locked by an operation in
// flight (pending-install); and that a store that is down fails every
// command with exit status 1, never as "not found" (upgrade --install must
// not install), and never prints the password of its connection string.
func TestLifecycleBadInput(t *testing.T) {
	k := kubeenv.Kube(t)
	pg := sqlenv.Postgres(t)
	fx := newLifecycleFixture(t)
	helm := helmbin.Helm(t, 4)
	env := fx.helmEnv(4, k.Kubeconfig)
	type tool struct {
		name string
		cmd  func(args ...string) *exec.Cmd
		ns   string
	}
	tools := []tool{
		{"helm", func(args ...string) *exec.Cmd {
			c := exec.Command(helm, args...)
			c.Env = append(env, "HELM_DRIVER=secret")
			return c
		}, "bad-helm"},
		{"helmstore", func(args ...string) *exec.Cmd {
			c := exec.Command(bin, append(args, "--driver", "postgres", "--connection", pg)...)
			c.Env = env
			return c
		}, "bad-helmstore"},
	}
	var results [2][]stepResult
	for i, tl := range tools {
		cs := namespace(t, k, tl.ns)
		namespace(t, k, tl.ns+"-b")
		// A release stuck in pending-install, as a killed helm leaves it.
		locked := &rspb.Release{Name: "locked", Namespace: tl.ns, Version: 1, Info: &rspb.Info{Status: rcommon.StatusPendingInstall, Description: "Initial install underway"},
			Chart: nil, Config: map[string]any{}}
		if tl.name == "helm" {
			if err := helmdriver.NewSecrets(cs.CoreV1().Secrets(tl.ns)).Create("sh.helm.release.v1.locked.v1", locked); err != nil {
				t.Fatal(err)
			}
		} else {
			s, err := migrate.Open(ctx(t), "postgres", pg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx(t), tl.ns, locked); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
		for _, args := range [][]string{
			{"install", "here", fx.chartDir, "-n", tl.ns},
			{"upgrade", "here", fx.chartDir, "-n", tl.ns + "-b"},
			{"rollback", "here", "-n", tl.ns + "-b"},
			{"uninstall", "here", "-n", tl.ns + "-b"},
			{"upgrade", "locked", fx.chartDir, "-n", tl.ns},
			{"upgrade", "--install", "locked", fx.chartDir, "-n", tl.ns},
			{"rollback", "locked", "-n", tl.ns},
		} {
			results[i] = append(results[i], runStep(tl.cmd(append(args, "--kube-context", kubeenv.Admin)...)))
		}
	}
	for j := range results[0] {
		w, g := results[0][j], results[1][j]
		if g.code != w.code || normalize(g.errLine, "bad-helmstore") != normalize(w.errLine, "bad-helm") {
			t.Errorf("step %d: helmstore exit %d %q; helm 4 exit %d %q", j, g.code, g.errLine, w.code, w.errLine)
		}
	}
	if !strings.Contains(results[0][4].errLine, "another operation") {
		t.Errorf("the locked release's upgrade failed with %q, want helm's another operation in progress", results[0][4].errLine)
	}

	const secret = "s3cr3t-pw-9"
	type downRun struct {
		driver, conn string
		args         []string
	}
	var downs []downRun
	for _, store := range []struct{ driver, conn string }{
		{"postgres", "postgres://helm:" + secret + "@127.0.0.1:1/helm?connect_timeout=2"},
		{"redis", "redis://:" + secret + "@127.0.0.1:1/0"},
		{"mysql", "helm:" + secret + "@tcp(127.0.0.1:1)/helm?timeout=2s"},
	} {
		for _, args := range [][]string{
			{"upgrade", "--install", "down", fx.chartDir},
			{"install", "down", fx.chartDir},
			{"rollback", "down"},
			{"uninstall", "down"},
			{"test", "down"},
		} {
			downs = append(downs, downRun{store.driver, store.conn, args})
		}
	}
	inParallel(len(downs), func(i int) {
		store, args := downs[i], downs[i].args
		{
			c := exec.Command(bin, append(args, "-n", "bad-helmstore", "--kube-context", kubeenv.Admin, "--driver", store.driver, "--connection", store.conn)...)
			c.Env = env
			out, _ := c.CombinedOutput()
			line := fmt.Sprintf("%s on %s that is down", strings.Join(args, " "), store.driver)
			switch {
			case c.ProcessState.ExitCode() != 1:
				t.Errorf("%s: exit status %d, want 1:\n%s", line, c.ProcessState.ExitCode(), out)
			case strings.Contains(string(out), secret):
				t.Errorf("%s: the password is printed:\n%s", line, out)
			case strings.Contains(string(out), "not found") || strings.Contains(string(out), "Installing it now"):
				t.Errorf("%s: a store that is down reads as not found:\n%s", line, out)
			case !strings.HasPrefix(string(out), "Error: "):
				t.Errorf("%s: want a single Error: line:\n%s", line, out)
			}
		}
	})
}

// TestLifecycleCancel sends SIGTERM to an install waiting for a Deployment
// that never becomes ready, with helm 4 and with helmstore on postgres:
// both print helm's notice that the release is cancelled, the same
// output, and fail (exit status 1).
func TestLifecycleCancel(t *testing.T) {
	k := kubeenv.Kube(t)
	pg := sqlenv.Postgres(t)
	fx := newLifecycleFixture(t)
	env := fx.helmEnv(4, k.Kubeconfig)
	helm := helmbin.Helm(t, 4)
	var outs []string
	for _, tl := range []struct {
		ns  string
		cmd func(args ...string) *exec.Cmd
	}{
		{"cancel-helm", func(args ...string) *exec.Cmd {
			c := exec.Command(helm, args...)
			c.Env = append(env, "HELM_DRIVER=secret")
			return c
		}},
		{"cancel-helmstore", func(args ...string) *exec.Cmd {
			c := exec.Command(bin, append(args, "--driver", "postgres", "--connection", pg)...)
			c.Env = env
			return c
		}},
	} {
		namespace(t, k, tl.ns)
		c := tl.cmd("install", "sig", fx.chartDir, "--set", "deploy=true", "--wait", "--timeout", "120s", "-n", tl.ns, "--kube-context", kubeenv.Admin)
		var out strings.Builder
		c.Stdout = &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(8 * time.Second)
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		if c.ProcessState.ExitCode() != 1 {
			t.Errorf("%s: exit status %d after SIGTERM, want 1", tl.ns, c.ProcessState.ExitCode())
		}
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] || !strings.Contains(outs[1], "Release sig has been cancelled.") {
		t.Errorf("after SIGTERM helmstore printed %q, helm 4 %q; want helm's cancel notice from both", outs[1], outs[0])
	}
}
