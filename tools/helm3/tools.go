//go:build tools

// Package helm3 pins the Helm 3 command line that the golden tests of the
// inspection commands compare with and that the plugin tests install the
// `helm store` plugin into: they build helm.sh/helm/v3/cmd/helm from this
// module. It is a separate module so that the library's own go.mod never
// depends on Helm 3's command packages.
package helm3

import _ "helm.sh/helm/v3/cmd/helm"
