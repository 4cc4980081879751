package cli

import (
	"github.com/fatih/color"
	rcommon "helm.sh/helm/v4/pkg/release/common"
)

// configureColor sets colours as helm 4's --color (HELM_COLOR, NO_COLOR)
// says: never, always, or auto (on a terminal).
func configureColor(mode string) {
	switch mode {
	case "never":
		color.NoColor = true
	case "always":
		color.NoColor = false
	}
}

// colorStatus is a status in helm 4's colours: deployed green, failed and
// unknown red, pending and uninstalling yellow.
func colorStatus(s rcommon.Status) string {
	switch s {
	case rcommon.StatusDeployed:
		return color.GreenString(s.String())
	case rcommon.StatusFailed, rcommon.StatusUnknown:
		return color.RedString(s.String())
	case rcommon.StatusPendingInstall, rcommon.StatusPendingUpgrade, rcommon.StatusPendingRollback, rcommon.StatusUninstalling:
		return color.YellowString(s.String())
	}
	return s.String()
}

// colorNamespace is a namespace in helm 4's colour, cyan.
func colorNamespace(ns string) string { return color.CyanString(ns) }
