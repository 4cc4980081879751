// Package crsplit stores Helm releases in the cluster as custom resources,
// like Helm's default Secrets driver but without its 1 MiB wall and without
// storing the whole chart again for every revision. Importing it registers
// the HELM_DRIVER name "crsplit":
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/crsplit"
//	)
//
//	err := helm3.Init(cfg, settings.RESTClientGetter(), ns, "crsplit", log)
//
// The CRDs must be installed first, once per cluster (InstallCRDs, or
// kubectl apply the YAML of CRDManifests; Open fails with
// ErrCRDsNotInstalled without them); the rights the backend needs are the
// Role or ClusterRole of RBACManifests (RBAC), named RBACName.
//
// # Connection string
//
// The connection string (HELM_DRIVER_CRSPLIT_CONNECTION_STRING for
// helm3.Init, the second argument of helm3.Open) is empty or names a
// kubeconfig context:
//
//	""         the current context: with helm3.Init, the cluster and user
//	           Helm's RESTClientGetter resolves (KUBECONFIG, --kubeconfig,
//	           --kube-context)
//	"staging"  the kubeconfig's context named staging instead
//
// helm3.Init passes its RESTClientGetter to the backend; helm3.Open uses
// the one given with helm3.WithRESTClientGetter, else the default
// kubeconfig loading rules (KUBECONFIG, ~/.kube/config, else the in-cluster
// configuration of a pod). A context the kubeconfig lacks is an error
// naming it. A program that builds its own *rest.Config puts it in the
// Config's RESTClientGetter and opens the backend directly:
//
//	cfg := helm3.NewConfig(crsplit.Name, "")
//	cfg.RESTClientGetter = rc // a *rest.Config
//	b, err := crsplit.Open(ctx, cfg)
//	...
//	store := helm3.New(b, cfg)
//
// The namespace is the view's (helm3.Init's namespace argument,
// Store.Namespace), never part of the connection string.
//
// # Objects
//
// All in API group helmstore.io/v1, namespaced, in the release's namespace:
//
//   - Release, one per revision, named by Helm's key
//     (sh.helm.release.v1.<name>.v<version>, as Helm names its Secrets). Its
//     spec holds the head: name, version, status, owner, timestamps, chart
//     summary, the record's description and last deployment time, the
//     digests of its parts, and the release record without chart, values
//     and manifest (info, hooks) as one opaque field, its compressed frame
//     (base64 in JSON). Opaque, because a structured record costs the API
//     server per-field work (decoding, pruning, validation, managed-field
//     tracking) on every write and read, and about twice the bytes. Its
//     labels are Helm's system labels (name, owner, status, version,
//     createdAt, modifiedAt, as on Helm's Secrets) and the release's custom
//     labels, so every query is a label selector answered by the API server.
//     Its annotation helmstore.io/summary copies, as JSON, what a summary
//     listing returns (the head's fields and chart summary, written with
//     the spec in the same write): a summary listing (Store.Summaries)
//     lists the Releases' metadata alone, as protobuf
//     PartialObjectMetadata, a tenth of their bytes, and decodes no record.
//     A Release without it (written by an earlier version, or whose summary
//     is over 16 KiB) or whose annotation does not decode is read whole;
//     where more than 64 are, the listing lists the Releases whole. A
//     description over 8 KiB is cut in the spec and the annotation, which
//     then say the summary was not recorded: the listing reads that release
//     whole, and returns its description as its record holds it.
//     Printer columns show it like helm list (and, with -o wide, like helm
//     history). Releases written by earlier versions, with the record as a
//     structured object (spec.release), are still read.
//   - Chart, Values and Manifest, one per distinct part in the namespace,
//     named by the SHA-256 of the part's canonical bytes. An upgrade that
//     changes only values creates one Release and one Values object; the
//     Chart is referenced, not written again. The manifest is a part like
//     the others rather than a field of Release: parts are addressed by
//     digest alone, a rollback or a no-op upgrade reuses it, and one rule
//     (and one garbage-collection path) covers all three.
//   - Chunk, a piece of a frame too large for one object.
//
// # Sizes
//
// No object exceeds MaxObjectBytes (900 KiB serialized), whatever the
// release size. A part's compressed frame is kept inside its object when it
// is at most InlinePartBytes (8 KiB); otherwise it is split into Chunk
// objects of at most ChunkBytes (600 KiB, about 800 KiB in base64), named
// <part uid>-<index>, owned by the part object, reassembled on read and
// verified against the part's digest. Keeping large frames out of the part
// object keeps the part object small, and it is the part object that is
// rewritten when a revision starts or stops using it. A release record
// (info and hooks) whose frame is larger than InlineReleaseBytes is stored
// in Chunk objects owned by its Release.
//
// # Writes, readers and garbage
//
// This is the no-transaction protocol of package
// github.com/helmstore/helmstore/cas, which crsplit runs on
// the Kubernetes API: its objects are the custom resources above, an
// object's version is its resourceVersion, and the referrers of a part
// are its ownerReferences.
//
// Parts carry an ownerReference to every Release that uses them, so the
// cluster's garbage collector deletes a part with its last owner (and a
// part's chunks with the part). An ownerReference needs the owner's UID,
// which exists only once the Release is created, so Create takes two round
// trips to the API server:
//
//  1. create the Release with the whole head (labels, part digests, release
//     record), labelled helmstore.io/pending=parts (a concurrent Create of
//     the same key fails here with ErrReleaseExists);
//  2. at once, store each part owned by that Release: a new part is created
//     with the ownerReference, an existing one gains it through a JSON
//     patch the API server applies to its latest version; a new chunked
//     part is written incomplete, then its chunks, then marked complete.
//
// A Release labelled pending is shown to readers only once every part it
// references is stored, complete and owned by it, and its chunked record
// (if any) is all there: readers check. Ownership leaves a part only when
// its owner is deleted, so a Release that is complete stays complete, and
// the moment the last part write lands is the one moment the release
// appears. A reader never sees a Release whose parts are missing, and no
// part is ever without an owner for the garbage collector to act on. After
// Create returns, the Release is committed in the background (rewritten
// without the pending label, with its resourceVersion as precondition) so
// that readers need not check again; Update and Delete of that release in
// the same store wait for the commit, an Update elsewhere that loses to it
// retries (the commit changed nothing of the release), and Close waits for
// all of them. A process that exits first leaves the Release pending: still
// read correctly, only checked on every read, and committed by the next
// Update (Helm updates every revision it creates) or by the cleanup below.
//
// A failure in step 2 hides the Release (relabelled pending=true, never
// shown, with its resourceVersion as precondition: a write whose answer
// was lost may have made it visible) and deletes it with what it wrote;
// if hiding loses to another client, which saw the release whole and
// updated it, the Create did happen and reports success. A
// writer that dies during step 2 leaves a pending Release, invisible since
// incomplete, that owns what it wrote; once older than PendingTimeout it is
// removed with those parts by a later Create of the same key or any Delete
// in the namespace, and the garbage collector follows it; one found
// complete is committed instead; a Release it cannot check is kept. The
// age is the cleaning client's clock against the API server's
// creationTimestamp, so clocks are assumed to agree within minutes: a
// Create slower than PendingTimeout/10 commits before returning, and
// fails if it lost to that cleanup; a faster one logs if its background
// commit finds the Release gone.
// Releases left pending (=true) by earlier versions of crsplit, which wrote
// the head only with the commit, are never shown and are cleaned up the
// same way.
//
// The backend also cleans up itself, for clusters without a garbage
// collector and so that Stats is right at once: Delete removes the Release
// (precondition: its resourceVersion), then for each of its parts
// drops it from the part's ownerReferences, deleting the part (then its
// chunks) when no live Release owns it any more. Each of those writes
// carries the resourceVersion it was decided on: a Create that added
// itself as an owner in between makes the delete fail with a conflict, and
// the decision is taken again, so a part still referenced is never deleted.
//
// Delete succeeds once the Release is deleted: a cleanup that keeps losing
// to writers of a shared part (retried with a jittered, growing backoff)
// is logged and left to the garbage collector and to later cleanups of the
// same part, which skip owners that are gone. A Release that cannot be read
// (a record that does not decode, a key that does not match its name,
// chunks missing) is listed as a head with Err, which the engine reports
// as corrupt for that release only, and is still deleted; when its digests
// cannot be trusted (unreadable, or a seal that does not verify), what it
// owns is found by ownerReferences rather than by its digests.
//
// Update writes the Release with the resourceVersion at which the store
// last read or wrote it, after storing the parts it newly references,
// owned by the Release first. If another client changed it since, it is
// read again and written over that version: the last writer wins, as with
// Helm's Secrets driver (Helm's upgrade relies on it: it creates the new
// revision, then marks the previous one superseded). Only an Update that
// keeps losing such races until the operation's deadline fails, with
// ErrConflict, having written nothing.
//
// # Reads
//
// Releases are read consistently (the latest version, as Helm's Secrets driver
// reads). Part objects and chunks never change once complete and the
// engine verifies every part against its digest, so they are read from the
// API server's watch cache first (resourceVersion=0), which spares etcd a
// read and the API server the decoding of a large object; what the cache
// does not hold yet, or holds incomplete, is read again from etcd before it
// counts as missing.
//
// # Limits
//
// A part gains an ownerReference (about 150 bytes) per revision that uses
// it; a part shared by thousands of revisions of one namespace would reach
// MaxObjectBytes (Helm's --history-max keeps revisions to ten by default).
// An Update that fails after storing new parts leaves them owned by the
// Release until it is deleted (the garbage collector then removes them).
// Two Updates of one revision racing to drop and re-add the same part are
// not supported; Helm never changes a stored revision's parts.
package crsplit
