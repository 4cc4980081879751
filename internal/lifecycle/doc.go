// Package lifecycle runs the release lifecycle (install, upgrade, rollback,
// uninstall, test) on any store, through the action package of the Helm the
// caller names: Helm 3 (helm.sh/helm/v3/pkg/action, with the helm3 face of
// helmstore) or Helm 4 (helm.sh/helm/v4/pkg/action, with the helm4 face).
// Each operation takes an options struct and returns the release it left and
// Helm's error, wrapped so that errors.Is finds Helm's sentinels.
//
// It is the one place the lifecycle lives: the helmstore command (and the
// `helm store` plugin, which runs it) is a thin cobra layer over it, and
// other front ends (an HTTP API) call it the same way. It locates charts
// (directory, archive, repo/name, --repo URL, oci://) with Helm's own
// ChartPathOptions.LocateChart, getters, downloader and registry client,
// and merges values with Helm's values.Options; it never copies Helm's
// command code. Printing is the caller's, and so is registering backends:
// import the packages of the stores Config.Driver may name (as for
// helm3.Init); the helmstore command imports them all.
package lifecycle
