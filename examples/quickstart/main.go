// Command quickstart runs a real Helm lifecycle — install, upgrades, a
// rollback, history, uninstall — through Helm's own action package on
// helmstore's embedded SQLite store. It needs no server and no cluster (the
// Kubernetes client is Helm's fake printing client).
//
//	go run ./examples/quickstart               # store in a temporary directory, removed on exit
//	go run ./examples/quickstart -db helm.db   # store in helm.db, kept (its directory must exist)
//	go run ./examples/quickstart -h            # usage
//
// The upgrades are values-only, as `helm upgrade --set image.tag=...` would
// do: they change the image tag and the replica count, not the chart, so
// CHART and APP VERSION (the chart's appVersion) stay the same on every row
// and the IMAGE column shows what each revision runs. helmstore stores the
// chart once for all of them.
//
// It prints the release history and how many bytes the store holds, beside
// what Helm's default Secrets driver would have stored for the same
// revisions, reads the history again through Helm 4 (package helm4, on the
// same file: one store serves both Helms), then uninstalls, leaving the
// store empty.
//
// Flags:
//
//	-db file   the SQLite database to store releases in; it is created if
//	           missing (not its directory) and kept after the run. Without
//	           -db, the database is in a new temporary directory that is
//	           removed on exit.
//
// It reads no environment variables: the store is always SQLite, at -db's
// path (HELM_DRIVER is for examples/helm3driver and examples/releaseapi).
//
// The first `go run` compiles Helm, client-go and the pure-Go SQLite
// (modernc.org/sqlite) from source, which takes minutes; later runs use Go's
// build cache.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	os.Exit(quickstart(os.Args[1:], os.Stdout, os.Stderr))
}

// quickstart runs the command with args and returns its exit status. A
// temporary directory it makes is removed before it returns, and on SIGINT
// or SIGTERM.
func quickstart(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "SQLite `file` to store releases in, created if missing (not its directory) and kept after the run\n(default: helm.db in a new temporary directory, removed on exit)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: quickstart [-db file]\n\n"+
			"Runs a Helm install, four values-only upgrades, a rollback and an uninstall\n"+
			"on helmstore's embedded SQLite store, and compares its size with Helm's\n"+
			"Secrets driver. Needs no cluster and reads no environment variables.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quickstart: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	path := *db
	if path == "" {
		dir, err := os.MkdirTemp("", "helmstore-quickstart-")
		if err != nil {
			fmt.Fprintln(stderr, "quickstart:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer func() { signal.Stop(sig); close(sig) }()
		go func() {
			if _, ok := <-sig; ok {
				os.RemoveAll(dir)
				os.Exit(130)
			}
		}()
		path = filepath.Join(dir, "helm.db")
	}
	if err := run(stdout, path); err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 1
	}
	return 0
}

func run(out io.Writer, dbPath string) error {
	ctx := context.Background()
	store, err := helm3.Open(ctx, "sqlite", dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	const ns = "demo"

	// An action.Configuration as `helm` builds it, with helmstore for
	// storage and Helm's fake client standing in for a cluster.
	cfg := &action.Configuration{
		Releases:     storage.Init(store.Namespace(ns)),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...interface{}) {},
	}
	ch, err := demoChart()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Storing releases in %s (sqlite)\n", dbPath)
	fmt.Fprintf(out, "Installing chart %s-%s (appVersion %s), then four values-only upgrades (image tag, replicas) and a rollback:\n"+
		"the chart, and so APP VERSION, stays the same; IMAGE is what each revision runs.\n\n",
		ch.Metadata.Name, ch.Metadata.Version, ch.Metadata.AppVersion)

	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "web", ns
	if _, err := install.Run(ch, map[string]interface{}{"replicas": 1}); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for i, tag := range []string{"1.25.1", "1.25.2", "1.26.0", "1.26.1"} {
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		if _, err := up.Run("web", ch, map[string]interface{}{"replicas": i + 2, "image": map[string]interface{}{"tag": tag}}); err != nil {
			return fmt.Errorf("upgrade: %w", err)
		}
	}
	rb := action.NewRollback(cfg)
	rb.Version = 3
	if err := rb.Run("web"); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}

	hist, err := action.NewHistory(cfg).Run("web")
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tSTATUS\tCHART\tAPP VERSION\tIMAGE\tDESCRIPTION")
	secretsBytes := 0
	for _, r := range hist {
		img, err := image(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%d\t%s\t%s-%s\t%s\t%s\t%s\n", r.Version, r.Info.Status, r.Chart.Metadata.Name, r.Chart.Metadata.Version, r.Chart.Metadata.AppVersion, img, r.Info.Description)
		n, err := secretSize(r)
		if err != nil {
			return err
		}
		secretsBytes += n
	}
	tw.Flush()

	st, err := store.Namespace(ns).Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nStored for %d revisions:\n", st.Releases)
	fmt.Fprintf(out, "  helmstore (sqlite):                %8.1f KiB  (%d chart, %d values, %d manifest parts)\n",
		float64(st.StoredBytes())/1024, st.Parts["chart"], st.Parts["values"], st.Parts["manifest"])
	fmt.Fprintf(out, "  Helm's Secrets driver would store: %8.1f KiB  (%.1fx more)\n",
		float64(secretsBytes)/1024, float64(secretsBytes)/float64(st.StoredBytes()))

	if err := readWithHelm4(ctx, out, dbPath, ns, "web"); err != nil {
		return err
	}

	if _, err := action.NewUninstall(cfg).Run("web"); err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	st, err = store.Namespace(ns).Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nUninstalled: the store now holds %d releases and %d parts.\n", st.Releases, st.TotalParts())
	return nil
}

// image is the container image revision r runs: the chart's default values
// with the revision's own (what `--set` gave) on top, as Helm renders them.
func image(r *release.Release) (string, error) {
	vals, err := chartutil.CoalesceValues(r.Chart, r.Config)
	if err != nil {
		return "", err
	}
	repo, err := vals.PathValue("image.repository")
	if err != nil {
		return "", err
	}
	tag, err := vals.PathValue("image.tag")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%v:%v", repo, tag), nil
}

// secretSize is the size of the data Helm's Secrets driver stores for r:
// the release as JSON, gzip'd at best compression, base64'd.
func secretSize(r *release.Release) (int, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(js)
	zw.Close()
	return base64.StdEncoding.EncodedLen(buf.Len()), nil
}

// demoChart is a web application chart with a large CRD file, the part of
// real charts (operators, monitoring stacks) that makes their releases big.
func demoChart() (*chart.Chart, error) {
	var crd strings.Builder
	crd.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n")
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&crd, "          field%04d:\n            description: Field %d of the widget; set it to tune behaviour %d of the controller.\n            type: string\n", i, i, i%37)
	}
	files := []*loader.BufferedFile{
		{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: web\nversion: 1.4.0\nappVersion: \"1.25.0\"\ndescription: A web application\n")},
		{Name: "values.yaml", Data: []byte("replicas: 1\nimage:\n  repository: nginx\n  tag: \"1.25.0\"\nservice:\n  port: 80\n")},
		{Name: "templates/deployment.yaml", Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: web
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        ports: [{containerPort: {{ .Values.service.port }}}]
`)},
		{Name: "templates/service.yaml", Data: []byte(`apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: {{ .Values.service.port }}}]
`)},
		{Name: "crds/widgets.yaml", Data: []byte(crd.String())},
	}
	return loader.LoadFiles(files)
}
