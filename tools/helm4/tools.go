//go:build tools

// Package helm4 pins the Helm 4 command line that the plugin tests of
// cmd/helmstore install the `helm store` plugin into: they build
// helm.sh/helm/v4/cmd/helm from this module. It is a separate module so that
// the library's own go.mod never depends on Helm 4's command packages.
package helm4

import _ "helm.sh/helm/v4/cmd/helm"
