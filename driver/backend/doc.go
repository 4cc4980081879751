// Package backend implements Helm's storage-driver semantics once, over a small
// Backend interface that stores heads and content-addressed parts. Every
// helmstore backend is an engine over its own Backend.
//
// What the engine decides, so no backend has to:
//   - keys: sh.helm.release.v1.<name>.v<version>, checked against the release;
//   - namespaces: a release is stored in rls.Namespace (or the view's, or
//     "default"); a view on "" lists and queries every namespace;
//   - labels: the system labels (name, owner, status, version, createdAt,
//     modifiedAt) come from the release; custom labels are rls.Labels minus
//     system ones, validated as Kubernetes labels;
//   - which error each method returns, as Helm's drivers do;
//   - which parts are fetched (those not already in the part cache) and that
//     every part read back hashes to its digest.
package backend
