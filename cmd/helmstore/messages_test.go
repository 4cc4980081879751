package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// runBin runs the helmstore binary with no store in its environment and
// returns its standard output, standard error and exit status.
func runBin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_DRIVER=", "HELMSTORE_DRIVER=")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// A store's error reaches the user with its connection string's secret
// taken out and every other word as the server and the client wrote it
// (a refused login on MariaDB, a URL no parser takes on PostgreSQL).
func TestErrorsKeepTheServersWords(t *testing.T) {
	const secret = "Zq7pw9W9xK"
	cfg, err := mysql.ParseDSN(sqlenv.MySQLServer(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		driver, conn string
		want         []string
	}{
		{"mysql", "helmstore_nobody:" + secret + "@tcp(" + cfg.Addr + ")/test",
			[]string{"open mysql (helmstore_nobody:xxxxx@tcp(" + cfg.Addr + ")/test)", "Access denied for user 'helmstore_nobody'@", "(using password: YES)"}},
		{"mysql", "mysql://helmstore_nobody:" + secret + "@" + cfg.Addr + "/test",
			[]string{"open mysql (mysql://helmstore_nobody:xxxxx@" + cfg.Addr + "/test)", "Access denied for user 'helmstore_nobody'@", "(using password: YES)"}},
		{"postgres", "postgres://u:" + secret + "@127.0.0.1:54x32/db",
			[]string{"open postgres (postgres://u:xxxxx@127.0.0.1:54x32/db)", "`postgres://u:xxxxx@127.0.0.1:54x32/db`: invalid port"}},
	} {
		_, stderr, code := runBin(t, "list", "--driver", c.driver, "--connection", c.conn)
		if code != 1 {
			t.Errorf("list on %s: exit %d, want 1\n%s", c.conn, code, stderr)
		}
		if strings.Contains(stderr, secret) {
			t.Errorf("list on %s: the secret is in the error:\n%s", c.driver, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("list on %s: the error lacks %q:\n%s", c.driver, w, stderr)
			}
		}
	}
}

// migrate names what it looked in: a named release the source does not
// hold is an error; a namespace with no releases is said to be empty, with
// the flag a user who forgot -A needs; -o json names the stores as the
// flags did, the time in seconds, and the error it stopped with.
func TestMigrateSaysWhatItLookedIn(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	args := []string{"migrate", "--from", "sqlite", "--from-connection", src, "--to", "sqlite", "--to-connection", dst, "-n", "team-a"}

	_, stderr, code := runBin(t, append(args, "nosuch")...)
	if code != 1 || !strings.Contains(stderr, `release "nosuch" in namespace "team-a" of sqlite`) || !strings.Contains(stderr, "not found") {
		t.Errorf("migrate nosuch: exit %d, want 1 and the release, namespace and store named as not found:\n%s", code, stderr)
	}
	stdout, stderr, code := runBin(t, args...)
	if code != 0 || !strings.Contains(stdout, `no releases in namespace "team-a" of sqlite`) || !strings.Contains(stdout, "-A") {
		t.Errorf("migrate of an empty namespace: exit %d, want 0 and the namespace named, with -A:\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "verified") {
		t.Errorf("migrate of an empty namespace claims a verification:\n%s", stdout)
	}

	stdout, _, code = runBin(t, append(args, "nosuch", "-o", "json")...)
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	if code != 1 || rep["from"] != "sqlite" || rep["namespace"] != "team-a" || rep["release"] != "nosuch" ||
		!strings.Contains(rep["error"].(string), "not found") {
		t.Errorf("-o json of a failed move: exit %d, report %v: want the stores as named, the namespace, the release and the error", code, rep)
	}
	if _, ok := rep["elapsedSeconds"].(float64); !ok || rep["elapsed"] != nil {
		t.Errorf("-o json: want elapsedSeconds (a number) and no elapsed in nanoseconds: %v", rep)
	}

	// Flags that do nothing for migrate are refused, and not in its help.
	_, stderr, code = runBin(t, append(args, "--driver", "postgres")...)
	if code != 1 || !strings.Contains(stderr, "--from and --to") {
		t.Errorf("migrate --driver: exit %d, want 1 and a pointer to --from and --to:\n%s", code, stderr)
	}
	help, _, _ := runBin(t, "migrate", "--help")
	for _, f := range []string{"--driver", "--connection ", "--repository-config", "--registry-config", "--helm "} {
		if strings.Contains(help, f) {
			t.Errorf("migrate --help lists %s, which does nothing there", f)
		}
	}
	if !strings.Contains(help, "--from-connection") || !strings.Contains(help, "--kubeconfig") {
		t.Errorf("migrate --help lacks its own flags or the Kubernetes ones:\n%s", help)
	}
}

// version names helmstore's version and the Helms it runs.
func TestVersion(t *testing.T) {
	stdout, stderr, code := runBin(t, "version")
	if code != 0 {
		t.Fatalf("version: exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"helmstore: ", "helm 3:    v3.", "helm 4:    v4.", "go:        go1."} {
		if !strings.Contains(stdout, w) {
			t.Errorf("version lacks %q:\n%s", w, stdout)
		}
	}
}

// A user with the binary and no checkout installs crsplit's CRDs with it:
// on a cluster without them, crsplit's error names the command; crds print
// writes them as YAML; crds install creates them, established, and the
// store then opens.
func TestCRDsInstall(t *testing.T) {
	k := kubeenv.Kube(t)
	cs, err := apiextensions.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	crds, err := crsplit.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if err := api.Delete(ctx(t), crd.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, crd := range crds {
		for {
			_, err := api.Get(ctx(t), crd.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the API server deletes it in the background
		}
	}
	// Whatever this test's outcome, leave the CRDs installed for the tests after it.
	t.Cleanup(func() { crsplit.InstallCRDs(context.Background(), k.Config(kubeenv.Admin)) })

	out, err := command(k, "list", "--driver", "crsplit", "-A").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "helmstore crds install") || strings.Contains(string(out), "crsplit.InstallCRDs,") {
		t.Errorf("list on crsplit without its CRDs: %v\n%s\nwant an error that names helmstore crds install", err, out)
	}
	yaml, err := command(k, "crds", "print").Output()
	if err != nil || strings.Count(string(yaml), "kind: CustomResourceDefinition") != len(crds) {
		t.Errorf("crds print: %v; want %d CustomResourceDefinitions:\n%s", err, len(crds), yaml)
	}
	if out, err := command(k, "crds", "install").CombinedOutput(); err != nil || !strings.Contains(string(out), "established") {
		t.Fatalf("crds install: %v\n%s", err, out)
	}
	for _, crd := range crds {
		cur, err := api.Get(ctx(t), crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after crds install: %v", err)
		}
		established := false
		for _, c := range cur.Status.Conditions {
			established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}
		if !established {
			t.Errorf("after crds install, %s is not established: %+v", crd.Name, cur.Status.Conditions)
		}
	}
	if out, err := command(k, "list", "--driver", "crsplit", "-A").CombinedOutput(); err != nil {
		t.Errorf("list on crsplit after crds install: %v\n%s", err, out)
	}
}
