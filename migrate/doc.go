// Package migrate moves Helm releases between any two stores, Helm's own
// (Secrets, ConfigMaps, SQL) and helmstore's, safely: every revision is
// read back from the destination and compared with the source before it
// counts as moved, a move killed at any point is finished by running it
// again, and the source is only ever written by the separate, explicit
// DeleteSource, which removes only what the destination holds equal.
// The helmstore command's migrate subcommand (cmd/helmstore) is this
// package on the command line.
//
//	from, err := migrate.Open(ctx, "secrets", "", settings.RESTClientGetter())
//	...
//	to, err := migrate.Open(ctx, "postgres", "postgres://helm@db/helm", nil)
//	...
//	report, err := migrate.Run(ctx, from, to, migrate.Options{Namespace: "team-a"})
//
// # What a move copies
//
// Every revision of the releases Options selects (one release, one
// namespace or every namespace; the newest MaxRevisions of each), each to
// the namespace it came from, oldest revision of a release first. Releases
// travel as Helm 4's v1 release, whose fields are a superset of Helm 3's,
// with their custom labels: what a Helm 3 tool wrote reads back the same
// through Helm 3, and what Helm 4 wrote (apply method, rollback revision)
// is kept. Equal is the check: the same JSON, as Helm's drivers store a
// release, and the same custom labels.
//
// # Resuming, and what stops a move
//
// A revision already in the destination and equal is skipped (Present), so
// a rerun after a kill, a lost connection or a timeout goes on where the
// last one stopped; each revision is written with one Create, which every
// store makes whole or not at all. A revision present and different stops
// the move with ErrDiffers, unless Overwrite. One that reads back
// otherwise stops it with ErrVerify.
//
// # Writers during a move
//
// A move does not lock the source; a Helm tool may go on writing to it. No
// revision it writes is lost: Run lists the source again after each pass
// and moves what is new or changed (Helm's actions change a revision's
// status whenever they rewrite it), and deletes from the destination what
// it copied there and the source has since deleted (Helm's history limit),
// until a pass finds nothing to do. A release whose latest revision is
// pending, a Helm operation in flight, is refused (ErrPending): that
// operation may write after the last pass. For a cut-over, stop the tool's
// writes (scale the operator down), run the move, point the tool at the
// destination (HELM_DRIVER), and DeleteSource when satisfied; until then,
// moving back is another Run in the other direction.
package migrate
