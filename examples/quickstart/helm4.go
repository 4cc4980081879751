package main

import (
	"context"
	"fmt"
	"io"

	action4 "helm.sh/helm/v4/pkg/action"
	kubefake4 "helm.sh/helm/v4/pkg/kube/fake"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	storage4 "helm.sh/helm/v4/pkg/storage"

	"github.com/helmstore/helmstore/helm4"
)

// readWithHelm4 reads the history of release name in namespace ns through
// Helm 4's own action package, on a Helm 4 store (package helm4) over the
// same SQLite file: a Helm 4 tool reads what a Helm 3 tool wrote, with no
// migration.
func readWithHelm4(ctx context.Context, out io.Writer, dbPath, ns, name string) error {
	store, err := helm4.Open(ctx, "sqlite", dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	cfg := action4.NewConfiguration()
	cfg.Releases = storage4.Init(store.Namespace(ns))
	cfg.KubeClient = &kubefake4.PrintingKubeClient{Out: io.Discard}
	hist, err := action4.NewHistory(cfg).Run(name)
	if err != nil {
		return fmt.Errorf("helm 4 history: %w", err)
	}
	last, ok := hist[len(hist)-1].(*rspb4.Release)
	if !ok {
		return fmt.Errorf("helm 4 history: a %T", hist[len(hist)-1])
	}
	fmt.Fprintf(out, "\nRead back through Helm 4 (package helm4, same file): %d revisions; revision %d %s, %q\n",
		len(hist), last.Version, last.Info.Status, last.Info.Description)
	return nil
}
