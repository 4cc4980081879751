package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/migrate"
)

func newSealCmd(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "seal",
		Short: "Encrypt, in place, the releases an encrypted store holds in plaintext",
		Long: `seal encrypts, with the current key-encryption key (the first of HELM_DRIVER_ENCRYPTION_KEYS),
every revision the store holds in plaintext: all of them when encryption is first turned on for a
store that already holds releases, or those a program without the key wrote. Until they are
sealed, a store with the key refuses them (encryption.ErrNotSealed). Each revision is read whole
and verified, then written back encrypted with its times and labels as they were. Stop the
namespaces' Helm writers while it runs (a write racing it on the same revision could be undone);
a rerun completes a pass that was stopped. A revision that cannot be read is named and left as it
is (exit status 1).`,
		Args: cobra.NoArgs,
		RunE: e.onStore(func(ctx context.Context, s migrate.Store) error {
			hs, ok := migrate.Helmstore(s)
			if !ok {
				return errors.New("seal: not a helmstore store (Helm's own drivers do not encrypt)")
			}
			res, err := encryption.Seal(ctx, hs.Namespace(e.namespace(all)), func(ns, key string, err error) {
				if err != nil {
					fmt.Fprintf(e.out, "%s/%s: unreadable, left as it is: %v\n", ns, key, err)
					return
				}
				fmt.Fprintf(e.out, "%s/%s: sealed\n", ns, key)
			})
			fmt.Fprintf(e.out, "%d revisions, %d sealed, %d unreadable\n", res.Releases, res.Sealed, res.Damaged)
			if err == nil && res.Damaged > 0 {
				err = fmt.Errorf("seal: %d revisions could not be read", res.Damaged)
			}
			return err
		}),
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	return cmd
}
