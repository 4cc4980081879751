// Package backend implements Helm's storage-driver semantics once, over a small
// Backend interface that stores heads and content-addressed parts. Every
// helmstore backend is an engine (New) over its own Backend.
//
// What the engine decides, so no backend has to:
//   - keys: sh.helm.release.v1.<name>.v<version>, checked against the release;
//   - namespaces: a release is stored in rls.Namespace (or the view's, or
//     "default"); a view on "" lists and queries every namespace;
//   - labels: the system labels (name, owner, status, version, createdAt,
//     modifiedAt) come from the release; custom labels are rls.Labels minus
//     system ones, validated as Kubernetes labels, none under
//     ReservedLabelPrefix (Create and Update fail naming the release and
//     the label, and store nothing);
//   - CreatedAt set on Create and kept on Update, ModifiedAt set on Update;
//   - which error each method returns, as Helm's drivers do;
//   - which parts are fetched (those not already in the part cache) and that
//     every part read back hashes to its digest.
//
// # Writing a backend
//
// A backend implements Backend (its documentation is the contract) with
// the public names of this package only (Head, Query, PartRef, Part,
// Digest, Kind), registers an Opener that returns New(b, cfg) with
// driver.Register, and runs the conformance suite, driver/drivertest, on
// itself. The helpers here hold what every backend needs: Query.Matches and
// SortHeads for Heads, DiffParts and DiffLabels for Update, PlanDelete for
// Delete, Head.SystemLabels for stores that index labels, Head.DigestText
// for storing digests, Chunks and JoinChunks for stores with a value size
// limit. Package memstore is a complete backend, in memory, to copy.
package driver
