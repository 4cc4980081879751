package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/internal/testing/testenv/helmbin"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// lifecycleScenarios are run step by step by helm on its Secrets and by
// helmstore on each store, each in a namespace of its own; {atomic} is
// Helm 3's --atomic or Helm 4's --rollback-on-failure, {postrender} Helm
// 3's --post-renderer executable or Helm 4's postrenderer plugin.
var lifecycleScenarios = []struct {
	name  string
	steps [][]string
}{
	{"values", [][]string{
		{"install", "web", "{chart}", "-f", "{dir}/values.yaml", "-f", "{dir}/override.yaml", "--set", "replicas=2,list[0]=z",
			"--set-string", "port=8080", "--set-json", `nested={"keep":"json","n":1}`, "--set-file", "motd={dir}/motd.txt",
			"--set-literal", "lit=a,b=c", "--description", "first install", "--labels", "team=web"},
		{"upgrade", "web", "{chart}", "--reuse-values", "--set", "greeting=reused", "-o", "json"},
		{"upgrade", "web", "{chart}", "--reset-then-reuse-values", "--set", "replicas=5", "-o", "yaml"},
		{"upgrade", "web", "{chart}", "--reset-values", "--history-max", "3", "--description", "reset"},
		{"rollback", "web", "3"},
		{"upgrade", "web", "{chart}", "--set", "greeting=bye", "--history-max", "2"},
		{"upgrade", "web", "{chart}", "--reuse-values", "{postrender}"},
		{"history", "web"},
		{"get", "values", "web", "-o", "json"},
		{"get", "values", "web", "--all"},
		{"get", "all", "web"},
	}},
	{"sources", [][]string{
		{"install", "arch", "{dir}/repo/demo-0.1.0.tgz"},
		{"upgrade", "arch", "demo", "--repo", "{repo}", "--version", "0.2.0"},
		{"upgrade", "arch", "golden/demo", "--version", "0.1.0", "-o", "json"},
		{"uninstall", "arch", "--keep-history"},
		{"upgrade", "--install", "arch", "golden/demo"},
		{"uninstall", "arch"},
		{"upgrade", "--install", "arch", "golden/demo", "--devel", "--create-namespace"},
	}},
	{"hooks", [][]string{
		{"install", "hk", "{chart}"},
		{"test", "hk"},
		{"test", "hk", "--logs"},
		{"test", "hk", "--filter", "name=hk-test"},
		{"test", "hk", "--filter", "!name=hk-test", "--timeout", "30s"},
		{"upgrade", "hk", "{chart}", "--no-hooks", "--skip-crds"},
		{"uninstall", "hk", "--no-hooks", "--keep-history", "--description", "gone"},
		{"install", "hk", "{chart}", "--replace", "--take-ownership"},
	}},
	{"failure", [][]string{
		{"install", "fl", "{chart}"},
		{"upgrade", "fl", "{chart}", "--set", "fail=true", "{atomic}", "--timeout", "30s"},
		{"upgrade", "fl", "{chart}", "--set", "fail=true", "--cleanup-on-fail"},
		{"rollback", "fl"},
		{"install", "fl2", "{chart}", "--set", "fail=true", "{atomic}"},
		{"install", "fl3", "{chart}", "--set", "fail=true"},
		{"install", "wt", "{chart}", "--set", "deploy=true", "--wait", "--timeout", "4s"},
		{"upgrade", "fl", "{chart}", "--set", "deploy=true", "--wait", "--timeout", "4s", "{atomic}"},
	}},
	{"dryrun", [][]string{
		{"install", "dr", "{chart}", "--dry-run"},
		{"install", "dr", "{chart}", "--dry-run=server", "--hide-secret"},
		{"upgrade", "--install", "dr", "{chart}", "--dry-run=client"},
		{"install", "dr", "{chart}", "--hide-notes"},
		{"upgrade", "dr", "{chart}", "--dry-run=server", "--set", "greeting=dry"},
		{"rollback", "dr", "1", "--dry-run"},
		{"uninstall", "dr", "--dry-run"},
	}},
	{"oci", [][]string{
		{"install", "o1", "{oci}", "--version", "0.1.0", "--plain-http"},
		{"upgrade", "o1", "{oci}", "--plain-http", "--reuse-values"},
		{"upgrade", "--install", "o2", "{oci}", "--version", "0.2.0", "--plain-http", "-o", "json"},
		{"install", "o3", "{oci}-nothing", "--plain-http"},
	}},
	{"errors", [][]string{
		{"install", "bad", "{dir}/nothing-here"},
		{"install", "bad", "demo", "--repo", "http://127.0.0.1:1/charts"},
		{"install", "bad", "{chart}", "-f", "{dir}/bad.yaml"},
		{"install", "bad", "{chart}", "-f", "{dir}/missing.yaml"},
		{"install", "bad", "nosuchrepo/demo"},
		{"upgrade", "bad", "{chart}"},
		{"rollback", "bad"},
		{"uninstall", "bad"},
		{"test", "bad"},
		{"install", "twice", "{chart}"},
		{"install", "twice", "{chart}"},
		{"rollback", "twice", "x"},
		{"rollback", "twice", "7"},
		{"install", "{chart}"},
		{"install", "a", "b", "c"},
	}},
}

// allStores are the scenarios that also run on redis and crsplit (the
// others run on sqlite and postgres), to keep the test's time down: the
// stores differ below the lifecycle, which these scenarios all reach.
var allStores = map[string]bool{"values": true, "hooks": true, "failure": true}

// stepResult is what one command printed and how it ended.
type stepResult struct {
	stdout, errLine string
	code            int
}

// runStep runs one command, helm's or helmstore's.
func runStep(cmd *exec.Cmd) stepResult {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	r := stepResult{stdout: out.String(), code: cmd.ProcessState.ExitCode()}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.HasPrefix(l, "Error: ") {
			r.errLine = l
		}
	}
	return r
}

var (
	ansicTime = regexp.MustCompile(`(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9]\d \d\d:\d\d:\d\d \d{4}`)
	rfcTime   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// normalize replaces times and the namespace ns in s.
func normalize(s, ns string) string {
	s = ansicTime.ReplaceAllString(s, "TIME")
	s = rfcTime.ReplaceAllString(s, "TIME")
	return strings.ReplaceAll(s, ns, "NS")
}

// TestLifecycleGolden runs each scenario with the real helm (3.22 and 4.3)
// on its Secrets and with helmstore (--helm 3 and 4) on sqlite and
// postgres (and redis and crsplit: allStores), on the test API server, each in its own namespace, and checks
// step by step that helmstore prints what helm prints (times and the
// namespace aside) and ends with the same exit status, and, after each
// scenario, that the Kubernetes objects made are the same (managers and
// apply operations included) and the stored releases deep-equal.
func TestLifecycleGolden(t *testing.T) {
	k := kubeenv.Kube(t)
	pg := sqlenv.Postgres(t)
	fx := newLifecycleFixture(t)
	fx.pushOCI(t, helmbin.Helm(t, 4), k.Kubeconfig)
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	if err := crsplit.InstallCRDs(ctx(t), k.Config(kubeenv.Admin)); err != nil {
		t.Fatal(err)
	}
	stores := []struct{ name, conn string }{{"sqlite", filepath.Join(t.TempDir(), "helm.db")}, {"postgres", pg},
		{"redis", redisPrefix(t)}, {"crsplit", ""}}
	for _, major := range []int{3, 4} {
		helm := helmbin.Helm(t, major)
		env := fx.helmEnv(major, k.Kubeconfig)
		add := exec.Command(helm, "repo", "add", "golden", fx.repoURL)
		add.Env = env
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("helm repo add: %v\n%s", err, out)
		}
		atomic := map[int]string{3: "--atomic", 4: "--rollback-on-failure"}[major]
		postRender := fx.postRenderer(t, major, helm, k.Kubeconfig)
		for _, sc := range lifecycleScenarios {
			t.Run(fmt.Sprintf("helm%d/%s", major, sc.name), func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				run := func(ns string, args []string, tool func([]string) *exec.Cmd) []stepResult {
					namespace(t, k, ns)
					var res []stepResult
					for _, s := range sc.steps {
						a := fx.expand(s)
						for i := range a {
							switch a[i] {
							case "{atomic}":
								a[i] = atomic
							case "{postrender}":
								a[i] = postRender
							}
						}
						res = append(res, runStep(tool(append(a, "-n", ns, "--kube-context", kubeenv.Admin))))
					}
					return res
				}
				hns := fmt.Sprintf("g%d-%s-helm", major, sc.name)
				want := run(hns, nil, func(a []string) *exec.Cmd {
					c := exec.Command(helm, a...)
					c.Env = append(env, "HELM_DRIVER=secret")
					return c
				})
				for _, st := range stores {
					if (st.name == "redis" || st.name == "crsplit") && !allStores[sc.name] {
						continue
					}
					ns := fmt.Sprintf("g%d-%s-%s", major, sc.name, st.name)
					got := run(ns, nil, func(a []string) *exec.Cmd {
						c := exec.Command(bin, append(a, "--helm", fmt.Sprint(major), "--driver", st.name, "--connection", st.conn)...)
						c.Env = env
						return c
					})
					for i, s := range sc.steps {
						w, g := want[i], got[i]
						line := strings.Join(s, " ")
						if g.code != w.code {
							t.Errorf("%s: %s: exit status %d, helm's %d\n helm: %s\n ours: %s", st.name, line, g.code, w.code, w.errLine, g.errLine)
						}
						if gs, ws := normalize(g.stdout, ns), normalize(w.stdout, hns); gs != ws {
							t.Errorf("%s: %s: output differs from helm %d's:\n%s", st.name, line, major, firstDiff(gs, ws))
						}
						if ge, we := normalize(g.errLine, ns), normalize(w.errLine, hns); ge != we {
							t.Errorf("%s: %s: error differs from helm %d's:\n ours: %s\n helm: %s", st.name, line, major, ge, we)
						}
					}
					compareObjects(t, cs, hns, ns)
					if sc.name == "values" {
						wantPostRendered(t, cs, ns)
					}
					compareReleases(t, k, hns, ns, st.name, st.conn)
				}
				if testing.Verbose() {
					for i, s := range sc.steps {
						t.Logf("$ helm %s (exit %d)\n%s%s", strings.Join(s, " "), want[i].code, want[i].stdout, want[i].errLine)
					}
				}
				t.Logf("%s on helm %d: %s", sc.name, major, time.Since(start).Round(time.Second))
			})
		}
	}
}

// objectView is what of a namespaced object the comparison keeps: what
// helm wrote and who manages which fields, without what the API server
// assigns (uid, versions, times, cluster IPs).
type objectView struct {
	Kind, Name  string
	Labels      map[string]string
	Annotations map[string]string
	Data        map[string]string
	Ports       any
	Managers    []string
}

// compareObjects fails t unless namespaces a and b hold the same
// ConfigMaps, Services and Secrets (other than Helm's release Secrets).
func compareObjects(t *testing.T, cs *kubernetes.Clientset, a, b string) {
	t.Helper()
	ga, gb := objectsIn(t, cs, a), objectsIn(t, cs, b)
	ja, _ := json.MarshalIndent(ga, "", " ")
	jb, _ := json.MarshalIndent(gb, "", " ")
	if sa, sb := strings.ReplaceAll(string(ja), a, "NS"), strings.ReplaceAll(string(jb), b, "NS"); sa != sb {
		t.Errorf("objects in %s differ from helm's in %s:\n%s", b, a, firstDiff(sb, sa))
	}
	if len(ga) == 0 {
		t.Errorf("no objects in %s to compare", a)
	}
}

func objectsIn(t *testing.T, cs *kubernetes.Clientset, ns string) []objectView {
	t.Helper()
	var out []objectView
	managers := func(m metav1.ObjectMeta) []string {
		var s []string
		for _, f := range m.ManagedFields {
			s = append(s, fmt.Sprintf("%s %s %s", f.Manager, f.Operation, f.FieldsV1.String()))
		}
		return s
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cms.Items {
		if o.Name == "kube-root-ca.crt" {
			continue
		}
		out = append(out, objectView{"ConfigMap", o.Name, o.Labels, o.Annotations, o.Data, nil, managers(o.ObjectMeta)})
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range svcs.Items {
		out = append(out, objectView{"Service", o.Name, o.Labels, o.Annotations, nil, o.Spec.Ports, managers(o.ObjectMeta)})
	}
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range secrets.Items {
		if o.Type == "helm.sh/release.v1" {
			continue
		}
		d := map[string]string{}
		for k, v := range o.Data {
			d[k] = string(v)
		}
		out = append(out, objectView{"Secret", o.Name, o.Labels, o.Annotations, d, nil, managers(o.ObjectMeta)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind+out[i].Name < out[j].Kind+out[j].Name })
	return out
}

// compareReleases fails t unless the store (name, conn) holds in ns the
// same revisions as helm's Secrets in hns, equal but for times and the
// namespace.
func compareReleases(t *testing.T, k *kubeenv.Server, hns, ns, name, conn string) {
	t.Helper()
	src, err := migrate.Open(ctx(t), "secret", "", k.Getter(kubeenv.Admin, hns))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := migrate.Open(ctx(t), name, conn, k.Getter(kubeenv.Admin, ns))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	want, got := releasesIn(t, src, hns), releasesIn(t, dst, ns)
	if len(want) != len(got) {
		t.Errorf("%s holds %d revisions in %s, helm's Secrets %d", name, len(got), ns, len(want))
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("%s: %s is in helm's Secrets, not in the store", name, key)
			continue
		}
		if gs, ws := strings.ReplaceAll(g, ns, "NS"), strings.ReplaceAll(w, hns, "NS"); gs != ws {
			t.Errorf("%s: %s differs from helm's:\n%s", name, key, firstDiff(gs, ws))
		}
	}
}

// releasesIn is every revision s holds in ns, as JSON without times.
func releasesIn(t *testing.T, s migrate.Store, ns string) map[string]string {
	t.Helper()
	revs, err := s.Revisions(ctx(t), ns, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range revs {
		rel, err := s.Get(ctx(t), r)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Key()] = releaseJSON(t, rel)
	}
	return out
}

// releaseJSON is rel as JSON, labels included, times left out.
func releaseJSON(t *testing.T, rel *rspb.Release) string {
	t.Helper()
	if rel.Info != nil {
		rel.Info.FirstDeployed, rel.Info.LastDeployed, rel.Info.Deleted = time.Time{}, time.Time{}, time.Time{}
	}
	for _, h := range rel.Hooks {
		h.LastRun.StartedAt, h.LastRun.CompletedAt = time.Time{}, time.Time{}
	}
	b, err := json.MarshalIndent(struct {
		R      *rspb.Release
		Labels map[string]string
	}{rel, rel.Labels}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// redisPrefix is a connection string to the test Redis with a key prefix
// of its own, whose keys are deleted when t ends.
func redisPrefix(t *testing.T) string {
	t.Helper()
	prefix := fmt.Sprintf("golden-%d", time.Now().UnixNano())
	u := redisenv.URL(t)
	t.Cleanup(func() {
		o, err := goredis.ParseURL(u)
		if err != nil {
			return
		}
		c := goredis.NewClient(o)
		defer c.Close()
		iter := c.Scan(context.Background(), 0, prefix+":*", 1000).Iterator()
		for iter.Next(context.Background()) {
			c.Del(context.Background(), iter.Val())
		}
	})
	return u + "?key_prefix=" + prefix
}

// wantPostRendered fails t unless the values scenario's last upgrade went
// through the post-renderer, which renames the chart label.
func wantPostRendered(t *testing.T, cs *kubernetes.Clientset, ns string) {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx(t), "web-values", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Labels["chart"]; got != "postrendered-demo-0.2.0" {
		t.Errorf("web-values in %s has label chart=%q, want the post-renderer's postrendered-demo-0.2.0", ns, got)
	}
}
