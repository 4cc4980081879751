package main_test

import (
	"bufio"
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/helmstore/helmstore/internal/testing/testenv/helmbin"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// bin is the helmstore binary the tests run, built by TestMain.
var bin string

func TestMain(m *testing.M) {
	if _, err := kubeenv.Binaries(); err != nil {
		fmt.Fprintf(os.Stderr, "helmstore tests: no etcd or Kubernetes binaries: %v\n", err)
	}
	dir, err := os.MkdirTemp("", "helmstore-bin")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "helmstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building helmstore: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	kubeenv.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return c
}

// seed creates namespace ns with releases × revisions written by Helm's own
// Secrets driver, each revision with a manifest of its own.
func seed(t testing.TB, k *kubeenv.Server, ns string, releases, revisions int) {
	t.Helper()
	cs := namespace(t, k, ns)
	d := helmdriver.NewSecrets(cs.CoreV1().Secrets(ns))
	c := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "demo", Version: "1.0.0", AppVersion: "1.0"},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(strings.Repeat("# padding of a realistic template\n", 300))}},
	}
	for i := range releases {
		name := fmt.Sprintf("rel-%02d", i)
		for v := 1; v <= revisions; v++ {
			st := rcommon.StatusSuperseded
			if v == revisions {
				st = rcommon.StatusDeployed
			}
			rls := &rspb.Release{
				Name: name, Namespace: ns, Version: v, Chart: c,
				Info:     &rspb.Info{Status: st, Description: "Upgrade complete"},
				Config:   map[string]any{"revision": v},
				Manifest: strings.Repeat(fmt.Sprintf("kind: ConfigMap # %s v%d\n", name, v), 200),
			}
			if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v), rls); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// namespace creates namespace ns unless it exists, and returns an admin's
// client.
func namespace(t testing.TB, k *kubeenv.Server, ns string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return cs
}

// killAfter runs the helmstore binary with args and kills it (SIGKILL)
// once it has printed n lines (a move: n releases reported), failing t if
// it ends before.
func killAfter(t *testing.T, k *kubeenv.Server, args []string, n int) {
	t.Helper()
	cmd := command(k, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines, got := bufio.NewScanner(out), 0
	for got < n && lines.Scan() {
		got++
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if got < n {
		t.Fatalf("the move reported %d releases before it ended, want %d to kill it after", got, n)
	}
}

// command runs the helmstore binary against the API server k.
func command(k *kubeenv.Server, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append(args, "--kubeconfig", k.Kubeconfig, "--kube-context", kubeenv.Admin)...)
	cmd.Env = append(os.Environ(), "HELM_DRIVER=")
	return cmd
}

// wantMoved fails unless every revision of ns in Secrets is in postgres,
// equal, and postgres has no other; it returns how many postgres holds.
// With partial, postgres may lack revisions (a move cut short) but what it
// holds must be whole and equal.
func wantMoved(t testing.TB, k *kubeenv.Server, ns, pg string, partial bool) int {
	t.Helper()
	src, err := migrate.Open(ctx(t), "secret", "", k.Getter(kubeenv.Admin, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := migrate.Open(ctx(t), "postgres", pg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	have, err := dst.Revisions(ctx(t), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := src.Revisions(ctx(t), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	if !partial && len(have) != len(want) {
		t.Errorf("postgres holds %d revisions, Secrets %d", len(have), len(want))
	}
	for _, r := range have {
		a, err := src.Get(ctx(t), r)
		if err != nil {
			t.Fatalf("%s in postgres, not in Secrets: %v", r, err)
		}
		b, err := dst.Get(ctx(t), r)
		if err != nil {
			t.Fatalf("%s listed in postgres, unreadable: %v", r, err)
		}
		if eq, err := migrate.Equal(a, b); err != nil || !eq {
			t.Errorf("%s differs between Secrets and postgres", r)
		}
	}
	return len(have)
}

// TestKillAndResume kills `helmstore migrate` (SIGKILL) after it has
// reported 2, 5 and 8 releases moved, checks each time that what postgres
// holds is whole and equal to the source, and that a last run completes
// the move, finding what the killed runs copied present.
func TestKillAndResume(t *testing.T) {
	const ns, releases, revisions = "cli-kill", 12, 5
	k := kubeenv.Kube(t)
	seed(t, k, ns, releases, revisions)
	pg := sqlenv.Postgres(t)
	args := []string{"migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns, "--parallel", "2"}
	for _, after := range []int{2, 5, 8} {
		killAfter(t, k, args, after)
		if got := wantMoved(t, k, ns, pg, true); got < after*revisions {
			t.Errorf("killed after %d releases reported: postgres holds %d revisions, want at least %d", after, got, after*revisions)
		}
	}
	out, err := command(k, append(args, "-o", "json")...).Output()
	if err != nil {
		t.Fatalf("last run: %v\n%s", err, out)
	}
	var rep struct {
		Revisions, Copied, Present int
		SourceBytes                int64 `json:"sourceBytes"`
		DestBytes                  int64 `json:"destinationBytes"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Revisions != releases*revisions || rep.Copied+rep.Present != rep.Revisions || rep.Present < 8*revisions {
		t.Errorf("last run's report %+v: want %d revisions, every one copied or present, at least %d present", rep, releases*revisions, 8*revisions)
	}
	if rep.SourceBytes <= 0 || rep.DestBytes <= 0 || rep.DestBytes >= rep.SourceBytes {
		t.Errorf("bytes: Secrets %d, postgres %d: want both known, postgres's fewer", rep.SourceBytes, rep.DestBytes)
	}
	wantMoved(t, k, ns, pg, false)
}

// TestProgressInTerminal runs a move in a real terminal (tmux) and reads
// the screen: the progress bar ends at every release and revision, with
// the summary below it.
func TestProgressInTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux: %v (Debian's tmux package)", err)
	}
	const ns = "cli-tty"
	k := kubeenv.Kube(t)
	seed(t, k, ns, 6, 3)
	pg := sqlenv.Postgres(t)
	session := fmt.Sprintf("helmstore-%d", os.Getpid())
	var quoted []string
	for _, a := range command(k, "migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns).Args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	line := "env -u HELM_DRIVER " + strings.Join(quoted, " ")
	run := exec.Command(tmux, "new-session", "-d", "-s", session, "-x", "150", "-y", "20", line+"; sleep 600")
	run.Env = append(os.Environ(), "HELM_DRIVER=")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	defer exec.Command(tmux, "kill-session", "-t", session).Run()
	var screen string
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command(tmux, "capture-pane", "-p", "-t", session).Output()
		if err != nil {
			t.Fatal(err)
		}
		if screen = string(out); strings.Contains(screen, "stored:") {
			break
		}
	}
	t.Logf("screen:\n%s", screen)
	for _, want := range []string{"6/6 releases", "100%", "(18/18,", "rev/s", `6 releases, 18 revisions in namespace "cli-tty": 18 copied`, "stored:"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal does not show %q", want)
		}
	}
	if strings.Contains(screen, "rel-00:") {
		t.Error("the terminal shows the plain per-release lines, not the bar")
	}
}

// TestVerifyStatsGC moves releases into postgres, damages one stored part
// there, and checks that verify names exactly the revisions that use it
// (exit status 1), that stats counts what postgres holds beside what
// Helm's Secrets hold, and that gc keeps every revision.
func TestVerifyStatsGC(t *testing.T) {
	const ns = "cli-verify"
	k := kubeenv.Kube(t)
	seed(t, k, ns, 4, 3)
	pg := sqlenv.Postgres(t)
	store := []string{"--driver", "postgres", "--connection", pg, "-n", ns}
	out, err := command(k, "migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	t.Logf("helmstore migrate --from secret --to postgres -n %s:\n%s", ns, out)
	out, err = command(k, append([]string{"verify"}, store...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "12 revisions read, 0 unreadable") {
		t.Fatalf("verify of an intact store: %v\n%s", err, out)
	}

	out, err = command(k, append([]string{"stats", "-o", "json"}, store...)...).Output()
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	var st []struct {
		Namespace           string
		Releases, Revisions int
		Parts               map[string]int
		StoredBytes         int64 `json:"storedBytes"`
		HelmBytes           int64 `json:"helmSecretsBytes"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	if len(st) != 1 || st[0].Namespace != ns || st[0].Releases != 4 || st[0].Revisions != 12 || st[0].Parts["chart"] != 1 ||
		st[0].StoredBytes <= 0 || st[0].HelmBytes <= st[0].StoredBytes {
		t.Errorf("stats: %+v; want %s: 4 releases, 12 revisions, 1 chart, fewer bytes than Helm's Secrets", st, ns)
	}
	t.Logf("helmstore stats -o json:\n%s", out)
	out, err = command(k, append([]string{"stats"}, store...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ns) {
		t.Errorf("stats: %v\n%s", err, out)
	}
	t.Logf("helmstore stats:\n%s", out)
	out, err = command(k, append([]string{"gc", "--dry-run"}, store...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "would remove: 0 pending revisions of writers that died, 0 unused parts, 0 loose chunks") {
		t.Errorf("gc --dry-run on postgres: %v\n%s", err, out)
	}
	out, err = command(k, append([]string{"gc"}, store...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "before: 12 revisions, ") || !strings.Contains(string(out), "after: 12 revisions, ") {
		t.Errorf("gc on postgres: %v\n%s", err, out)
	}

	// Damage the manifest part of rel-02 revision 2.
	db, err := stdsql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var digest string
	if err := db.QueryRow(`SELECT manifest_digest FROM helmstore_releases WHERE namespace = $1 AND release_key = 'sh.helm.release.v1.rel-02.v2'`, ns).Scan(&digest); err != nil {
		t.Fatal(err)
	}
	var users int
	if err := db.QueryRow(`SELECT count(*) FROM helmstore_releases WHERE namespace = $1 AND (manifest_digest = $2 OR manifest_base = $2)`, ns, digest).Scan(&users); err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`UPDATE helmstore_part_chunks SET data = overlay(data placing '\xff'::bytea from 12 for 1) WHERE namespace = $1 AND digest = $2 AND seq = 0`, ns, digest)
	if n, _ := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("damage: %v (%d rows)", err, n)
	}
	cmd := command(k, append([]string{"verify"}, store...)...)
	out, err = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("verify of a damaged store exited %d (%v), want 1\n%s", cmd.ProcessState.ExitCode(), err, out)
	}
	for _, want := range []string{ns + "/sh.helm.release.v1.rel-02.v2: ", "corrupt", fmt.Sprintf("12 revisions read, %d unreadable", users)} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verify of a damaged store does not say %q:\n%s", want, out)
		}
	}
}

// TestPlugin installs the plugin (plugin/store) once, with the real Helm 3,
// into a data directory Helm 4 shares, and checks that both helms list it
// without complaint and run it: stats and list on releases moved into
// postgres, and upgrade --install with the store named by HELMSTORE_DRIVER
// (HELM_DRIVER=postgres stops helm itself), each helm's lifecycle and
// status block: Helm 4's records server-side apply, Helm 3's no apply
// method.
func TestPlugin(t *testing.T) {
	const ns, lcns = "cli-plugin", "cli-plugin-lifecycle"
	k := kubeenv.Kube(t)
	seed(t, k, ns, 2, 2)
	namespace(t, k, lcns)
	pg := sqlenv.Postgres(t)
	if out, err := command(k, "migrate", "--from", "secret", "--to", "postgres", "--to-connection", pg, "-n", ns).CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	chartDir := demoChart(t, t.TempDir(), "0.1.0")
	home := t.TempDir()
	// HELM_PLUGINS is where Helm puts it by default: Helm 4.3.2's plugin
	// install links a local directory into $HELM_DATA_HOME/plugins
	// whatever HELM_PLUGINS says, and plugin list then reads HELM_PLUGINS.
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "HELM_DRIVER=", "HELMSTORE_HELM=", "KUBECONFIG="+k.Kubeconfig,
		"HELM_PLUGINS="+filepath.Join(home, "data", "plugins"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"))
	run := func(major int, extra []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(helmbin.Helm(t, major), args...)
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(major int, extra []string, args ...string) string {
		t.Helper()
		out, err := run(major, extra, args...)
		if err != nil {
			t.Fatalf("helm %d %s: %v\n%s", major, strings.Join(args, " "), err, out)
		}
		return out
	}
	t.Logf("helm 3 plugin install:\n%s", must(3, nil, "plugin", "install", filepath.Join(repo, "plugin", "store")))
	for _, major := range []int{3, 4} {
		out := must(major, nil, "plugin", "list")
		if !strings.Contains(out, "store") {
			t.Fatalf("helm %d plugin list does not show store:\n%s", major, out)
		}
		for _, bad := range []string{"claim", "unknown field", "failed to load", "WARNING"} {
			if strings.Contains(out, bad) {
				t.Errorf("helm %d plugin list says %q:\n%s", major, bad, out)
			}
		}
	}
	for _, major := range []int{3, 4} {
		t.Run(fmt.Sprintf("helm%d", major), func(t *testing.T) {
			out := must(major, nil, "store", "stats", "--driver", "postgres", "--connection", pg, "-n", ns)
			if !strings.Contains(out, ns+"  2         4 ") {
				t.Errorf("helm store stats:\n%s", out)
			}
			out = must(major, nil, "store", "list", "--driver", "postgres", "--connection", pg, "-n", ns)
			for _, want := range []string{"NAME", "rel-00", "rel-01", "deployed", "demo-1.0.0"} {
				if !strings.Contains(out, want) {
					t.Errorf("helm store list does not show %q:\n%s", want, out)
				}
			}
			// HELM_DRIVER cannot name the store: helm reads it first.
			out, err := run(major, []string{"HELM_DRIVER=postgres"}, "store", "list", "-n", ns)
			if err == nil || !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), `unknown driver "postgres"`) {
				t.Errorf("helm %d with HELM_DRIVER=postgres: %v, want helm's unknown driver:\n%s", major, err, out)
			}
			store := []string{"HELMSTORE_DRIVER=postgres", "HELM_DRIVER_POSTGRES_CONNECTION_STRING=" + pg}
			name := fmt.Sprintf("plug%d", major)
			out = must(major, store, "store", "upgrade", "--install", name, chartDir, "-n", lcns)
			want := fmt.Sprintf("Release %q does not exist. Installing it now.\nNAME: %s\n", name, name)
			if !strings.HasPrefix(out, want) || strings.Contains(out, "DESCRIPTION: Install complete") != (major == 4) {
				t.Errorf("helm %d store upgrade --install printed:\n%s\nwant it to start %q, with a DESCRIPTION line only for Helm 4", major, out, want)
			}
			s, err := migrate.Open(ctx(t), "postgres", pg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rel, err := s.Get(ctx(t), migrate.Revision{Namespace: lcns, Name: name, Version: 1})
			if err != nil {
				t.Fatal(err)
			}
			if method := map[int]string{3: "", 4: "ssa"}[major]; rel.ApplyMethod != method {
				t.Errorf("helm %d store install recorded apply method %q, want %q", major, rel.ApplyMethod, method)
			}
		})
	}
}
