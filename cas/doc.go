// Package cas stores Helm releases atomically, as seen by readers, on an
// object store without multi-object transactions: one that can only create
// an object if absent, read it with a version, and replace or delete it if
// it is still at that version (compare-and-swap), and list objects by
// label. Kubernetes (resourceVersion; the crsplit backend) and Azure Cosmos
// DB (ETag; 2 MB items, no transaction across partitions) are such stores.
// The protocol is written once here, over the ObjectStore interface; a
// backend implements ObjectStore and turns it into a driver.Backend with
// New.
//
// # Objects
//
// A revision is a head object (KindHead, named by the store from the
// release key) plus content-addressed part objects (KindChart, KindValues,
// KindManifest, named by digest, one per distinct part in a namespace).
// A frame too large for its object is kept in chunk objects (KindChunk,
// named <uid>-<i>, or <uid>-<set>-<i> for a head's body, from the UID of
// the object they belong to). Each part
// object lists as Referrers the head objects that use it, by UID; each
// chunk, the object it belongs to. A head object may embed the frames of
// small parts of its own revision (HeadRecord.Embedded, up to
// Config.EmbedBytes: a values-only upgrade's deltas): those have no part
// object, need no referrer, are read with the head and go with it.
// Labels index head objects: the system labels (driver.LabelName, ...),
// the custom labels, and the protocol's own label helmstore.io/pending
// (LabelPending; the protocol's labels are named in internal/caswire),
// which List selects by.
//
// A count or size an object records (a frame's chunks and bytes) is a
// claim, not a fact: a reader refuses one that no write could have made
// (a frame larger than the codec's limits, driver.MaxPartBytes and
// driver.MaxHeadBytes, allow; more chunks than its bytes make pieces of
// 512 bytes, the smallest chunk), and reads and deletes chunks a window at a time,
// stopping at a missing one or at more bytes than recorded, so that what
// a damaged record costs is bounded by what was written, never by what it
// claims.
//
// # Invariants
//
// Whatever the interleaving of writers, whatever store call fails or loses
// its answer, and wherever a writer dies between two store calls:
//
//  1. Readers never see a release with missing parts: a head that Heads
//     returns has every part it references stored, complete (all chunks)
//     and readable, and its body (chunked or not) readable.
//  2. Nothing referenced is ever removed: a part object is deleted only
//     when no live head object refers to it, decided at a version that
//     the delete carries as its precondition; a referrer is added to a
//     part before a head referencing it is written, and removed only after
//     that head stopped referencing it or was deleted.
//  3. Garbage of a dead writer is collected: a head object a writer left
//     pending is, once abandoned (see below), either committed (it was
//     complete) or removed with what only it referred to, by the next
//     Create of its key, by any Delete in its namespace, or by Collect;
//     parts and chunks whose referrers are all gone are removed by the
//     cleanup of the next head that drops them, by the Update that added
//     them for a head it then found gone, or by Collect (which users
//     reach through helm3.Collect; on Kubernetes, the cluster's garbage
//     collector removes parts and chunks too).
//  4. A live writer's head is never taken for abandoned: a Create makes
//     no write that can make its head visible after its pending window
//     ends, and a pending head is abandoned only when its writer hid it
//     (it is being removed), Config.ClockSkew after its window ended, or
//     Config.PendingTimeout after it was created. Whoever then commits or
//     removes it writes at the version it read, as does the writer's own
//     commit: the store decides any race between them.
//
// # Steps
//
// How Create, Update, Delete, List, the index of latest revisions and
// retries keep these invariants, step by step, with the contract of each
// ObjectStore operation: docs/cas.md in the repository.
package cas
