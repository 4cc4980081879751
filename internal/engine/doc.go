// Package engine implements Helm's storage-driver semantics once, over a
// driver.Backend that stores heads and content-addressed parts. Each face
// (package helm3 for Helm 3, helm4 for Helm 4) is a thin wrapper of a
// View: it gives the engine its Helm version's release type and maps
// driver's sentinel errors to its Helm's.
//
// The engine is generic over the face's release type R, which it never
// looks into: a Codec[R] (internal/helm3codec's, internal/helm4codec's) takes a
// release apart into the neutral form (codec.Meta, what the engine checks
// and indexes; codec.Split, the head's JSON and its parts) and puts it back
// together. The engine, package codec and the backends know no Helm type;
// the codec is the one place a Helm version's types appear.
//
// What the engine decides, so no backend has to:
//   - keys: sh.helm.release.v1.<name>.v<version>, checked against the
//     release's name and version;
//   - namespaces: a view scoped to a namespace stores every release there
//     whatever its own Namespace (the storage namespace, as Helm's Secrets
//     driver; storage.go); the view on "" stores a release in its own (or
//     DefaultNamespace) and lists and queries every namespace; names and
//     namespaces are validated as Kubernetes names (names.go, without
//     linking Kubernetes);
//   - labels: the system labels (name, owner, status, version, createdAt,
//     modifiedAt) come from the release; custom labels are the release's
//     labels minus system ones, validated as Kubernetes labels, at most
//     driver.MaxLabels, none under driver.ReservedLabelPrefix (Create and
//     Update fail naming the release and the label, and store nothing);
//   - CreatedAt set on Create and kept on Update, ModifiedAt set on Update;
//   - which error each method returns, as Helm's drivers do: not found and
//     already exists bare, the rest in a driver.ReleaseError naming the
//     operation and the release;
//   - a store without keys writes nothing into an encrypted namespace
//     (plaintext.go), and Seal seals what it finds in plaintext (seal.go);
//   - a bound of cfg.Timeout on each operation;
//   - how parts are stored: the chart in full, values and manifest as a
//     delta against the release's keyframe when that pays (keyframes.go),
//     none over driver.MaxPartBytes, a head none over driver.MaxHeadBytes;
//   - the head's seal over its key and part digests (driver.Head.Seal);
//   - which parts are fetched (those not already in the part cache, nor
//     kept with the head) and that every part read back hashes to its
//     digest and every head's seal verifies; damage is reported as
//     driver.ErrCorrupt for that release only, and a part copy found
//     damaged is rewritten by the next write that carries it
//     (driver.Part.Rewrite; damaged.go).
//
// The files follow the concerns: engine.go the Engine and View, read.go
// (Get, List, Query, assembling releases), write.go (Create, Update, the
// head and parts of a write), delete.go, parts.go (reading, verifying and
// decoding parts), keyframes.go, summaries.go, rules.go and names.go
// (validation), storage.go, plaintext.go, seal.go, verify.go, collect.go.
//
// Of reaches the View under a face's Store, for the module's tests and
// benchmarks (its backend, and SetDeltas).
package engine
