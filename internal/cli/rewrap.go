package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/migrate"
)

func newRewrapCmd(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "rewrap",
		Short: "Move an encrypted store's data keys to its current key-encryption key",
		Long: `rewrap moves the data key each namespace of an encrypted store keeps (one per namespace) to the
current key-encryption key, the first of HELM_DRIVER_ENCRYPTION_KEYS; the others must still be there
for it to read the old ones. Once it has run, the store reads every release with the current key
alone, and the old keys can be removed. It rewrites no release, may run while Helm works, and a
rerun completes a pass that was stopped.`,
		Args: cobra.NoArgs,
		RunE: e.onStore(func(ctx context.Context, s migrate.Store) error {
			hs, ok := migrate.Helmstore(s)
			if !ok {
				return errors.New("rewrap: not a helmstore store (Helm's own drivers do not encrypt)")
			}
			res, err := encryption.Rewrap(ctx, hs.Namespace(e.namespace(all)), func(ns string, rewrapped bool) {
				what := "already under the current key"
				if rewrapped {
					what = "rewrapped"
				}
				fmt.Fprintf(e.out, "%s: %s\n", ns, what)
			})
			fmt.Fprintf(e.out, "%d namespaces, %d rewrapped\n", res.Namespaces, res.Rewrapped)
			return err
		}),
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	return cmd
}
