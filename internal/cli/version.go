package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// module is helmstore's module path.
const module = "github.com/helmstore/helmstore"

func newVersionCmd(e *env) *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of helmstore and of the Helms it is built with",
		Long: `version prints helmstore's version (the module version it was installed at, or
"(devel)" with the commit for a build from a checkout), the versions of Helm 3 and Helm 4
whose action packages the lifecycle commands run (--helm), and Go's.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildVersions()
			if short {
				fmt.Fprintln(e.out, v.helmstore)
				return nil
			}
			fmt.Fprintf(e.out, "helmstore: %s\nhelm 3:    %s\nhelm 4:    %s\ngo:        %s\n", v.helmstore, v.helm3, v.helm4, runtime.Version())
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "print helmstore's version only")
	hideFlags(cmd, append(storeFlags, lifecycleOnlyFlags...))
	return cmd
}

// versions are the versions of the modules a binary was built with.
type versions struct{ helmstore, helm3, helm4 string }

// buildVersions reads them from the binary's build information; a module
// it does not name is "unknown".
func buildVersions() versions {
	v := versions{helmstore: "unknown", helm3: "unknown", helm4: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Path == module {
		v.helmstore = bi.Main.Version
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" && (v.helmstore == "" || v.helmstore == "(devel)") {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			v.helmstore = "(devel) " + rev
		}
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		switch d.Path {
		case module:
			v.helmstore = d.Version // a program that imports the cli (the plugin's tests)
		case "helm.sh/helm/v3":
			v.helm3 = d.Version
		case "helm.sh/helm/v4":
			v.helm4 = d.Version
		}
	}
	return v
}
