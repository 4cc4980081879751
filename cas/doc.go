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
// # The contract of each ObjectStore operation
//
//   - Create(obj): atomically, if no object of obj's kind, namespace and
//     name exists, store it with a new UID and Version; else ErrExists.
//   - Get(ref): the object as last written, with its Version; ErrNotFound
//     if there is none. With ReadOptions.Stale the store may answer from a
//     cache that is behind (an older version, or ErrNotFound).
//   - Replace(obj): atomically, if the object is at obj.Version, write obj
//     over it (new Version, same UID and Created); ErrVersionMismatch if it
//     is at another version, ErrNotFound if it does not exist.
//   - Delete(ref, version): atomically, if the object is at version (or
//     version is ""), remove it; ErrVersionMismatch, ErrNotFound as above.
//   - List(sel): the objects selected (possibly more; never fewer), each
//     at a version no older than any write finished before the call.
//   - AddReferrer(ref, r) (optional, ReferrerAdder): atomically add r to
//     the object's referrers at whatever version it is.
//
// A Version is never reused for the same name, even after a delete and a
// create, so a version precondition also pins the object's incarnation.
// These three sentinels report those outcomes and nothing else: an
// unreachable store is never ErrNotFound. A call whose answer is lost
// (a transport error) may or may not have happened; the protocol reads
// again where that matters.
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
// # Create
//
// Create takes two sequential rounds of store calls:
//
//  1. create the head object, whole (labels, digests, body), labelled
//     LabelPending=PendingParts (helmstore.io/pending=parts), with a
//     token naming this Create (LabelWriter, helmstore.io/writer) and the
//     end of its pending window (LabelPendingUntil,
//     helmstore.io/pending-until: its context's deadline, or
//     PendingTimeout from now if sooner); a
//     concurrent Create of the key fails here (driver.ErrReleaseExists),
//     unless the head it finds is abandoned: then it commits it (it was
//     complete, and the Create fails as exists) or removes it and creates
//     its own;
//  2. at once and in parallel, with the UID the head now has, make each
//     part it references and does not embed stored and referred to by it
//     (a new part is created with the referrer; an existing one gains it,
//     with AddReferrer or by compare-and-swap; a new chunked part is
//     created incomplete, then its chunks, then replaced complete), and
//     write its chunked body, if any; all on a context that ends with the
//     pending window.
//
// A head labelled pending=parts is shown to readers only when every part
// it references is stored, complete and referred to by it, and its body is
// all there: readers check. A referrer leaves a part only when the head is
// deleted or stops referencing it, so a complete head stays complete, and
// the last write of step 2 is the one moment the release appears. After
// Create returns, the head is committed in the background (replaced without
// the pending labels, at the version created) so that readers need not
// check; this store's Create, Update and Delete of the release wait for
// that until their own deadline (then they fail with
// driver.ErrUnavailable, having done nothing), and Close waits for all of
// them for Config.CloseTimeout at most (then it stops them and says so in
// the log: an uncommitted head is readable, and is committed by the next
// write that meets it). A Create slower than PendingTimeout/10, or that
// finished step 2 past its window, commits before returning instead, and
// fails if its head was taken for abandoned and removed meanwhile.
//
// A create of the head whose answer is lost (a transport error: it may
// have happened) is followed by a read of the head: if it carries this
// Create's token, the Create goes on with it; if not (or the read fails),
// Create fails, and a head it may have left is abandoned when its window
// ends.
//
// If step 2 fails, the head is rolled back in the background (Create
// waits for that until its deadline): hidden (relabelled
// LabelPending=PendingHidden, helmstore.io/pending=true, at its version: a write whose answer was
// lost may have made it visible; from then on it is abandoned, and any
// writer may remove it), deleted at that version, and what it wrote loses
// it as referrer. Each write of the rollback that fails or loses its
// answer is followed by a read of the head, which says what happened and
// what to write next, until the head is gone or that read fails too. If
// another writer changed the head before it was hidden, that writer saw
// the release whole and updated it: the Create happened, and succeeds. So
// a Create that failed leaves nothing behind for its key once its store
// answers again, and what it may leave (its process died, the store stopped
// answering) is abandoned when its window ends (ClockSkew after the
// operation's deadline), never blocking the key longer.
//
// # Update
//
// Last writer wins, as in Helm's own drivers: the head is replaced at the
// version this store last saw (read first if it has seen none), after its
// newly referenced parts gained it as referrer. If another writer changed
// it since, it is read again and written again over that version, spaced
// by the retry policy; only when those races outlast the policy (bounded by
// the operation's context deadline) does Update fail, with ErrConflict,
// having written no head. Parts the old version referenced and the new one
// does not then lose the referrer, and are deleted if no live head refers
// to them. If the head turns out to be gone (the replace finds no object,
// or the object read again is another incarnation, or none is visible),
// the UID of the head read has no live head: the referrers the attempt
// added under it are removed again, each part deleted if no live head
// refers to it, and the chunks of the body it wrote are deleted, before
// Update reports the release not found (or writes over the new
// incarnation). No other write would meet them: cleanups visit the parts
// their own heads reference.
//
// # Delete
//
// The head object is deleted first (at the version read), so no reader
// sees it with parts missing; then each of its parts loses it as referrer,
// deleted when no live head refers to it any more (each write at the
// version it was decided on), then its chunks. Once the head is deleted,
// Delete succeeds: a cleanup that keeps losing races is logged and left to
// later cleanups and Collect. Delete then sweeps the namespace for stale
// pending heads.
//
// # List
//
// A summary listing (driver.Backend.List) is one List of head objects (of
// a namespace or all; by labels and status where every revision is wanted,
// since the latest revision is chosen before they apply; of the heads not
// retired from the index below where the latest revisions are wanted),
// and no part or chunk object: a committed head object's record holds
// the summary (driver.SummaryFields) and is
// returned as it is stored. A pending head is read as Heads reads it
// (visible only once its parts are all there: invariant 1 holds for
// listings too), and one that cannot be read is returned with Err. Latest,
// the name prefix, the cursor and the limit are then applied in memory
// (driver.ListQuery.Select): of the heads listed, the highest visible
// revision of each release.
//
// # Latest
//
// The index of latest revisions is the label helmstore.io/latest
// (LabelLatest) on head objects: "true" (marked), "false" (retired), or
// none (a head written before the index: counts as marked). Its one
// invariant, whatever the interleaving and wherever a writer dies:
//
//  5. The highest visible revision of every release is not retired. (A
//     lower one may be marked too: stale marks cost the listing a head
//     each, never a wrong answer, since it takes the highest.)
//
// Steps:
//
//   - Create writes the head marked (step 1), so a revision is marked from
//     the moment it can become visible. An Update keeps the mark of the
//     version it writes over; a commit or rollback keeps every label but
//     the pending ones. A pending head is never retired.
//   - Retire, in the background commit of a Create: list the release's
//     heads not retired, of lower revisions and committed (one this store
//     is still committing is waited for and read again; this store's
//     Updates of them are locked out, highest first, and one this store
//     updated since is read again); commit the new head W (a write at the
//     version it was created at); then replace each listed head with the
//     label "false", at the version listed. A crash or a lost race at any
//     step leaves a head marked: a stale mark.
//   - Delete of a head H that is not retired first marks the highest
//     visible revision P below H (a committed P is written with "true"
//     even when it has it, at the version read; a visible pending P is
//     marked since its create; an invisible pending one is passed over,
//     it stays marked until committed), then deletes H at the version
//     read; a write that loses a race starts the Delete again from its
//     read. A retired H needs nothing: a higher revision vouched for it.
//
// Why invariant 5 holds: a retirement of P relies on W. P's version was
// listed before W's commit and P is replaced at that version after it.
// A Delete of W that reads W before the commit fails at W's old version
// and reads again; one that reads W after it marks P (or a higher visible
// revision, itself marked) with a write after the listing, so either the
// retirement fails at P's listed version or the mark comes after it and
// restores it; and the Delete of that revision in turn does the same. A
// commit that fails (W changed, hidden or gone) retires nothing. A head
// made visible only by a lost answer and then hidden was never committed,
// so it retired nothing.
//
// # Retries
//
// Every compare-and-swap loop of the protocol uses one policy (Retry):
// jittered exponential backoff, ending when the next wait would pass the
// context's deadline (or Retry.NoDeadline without one). The waits, the
// pending windows and the age of pending heads go by Config.Clock (the
// system's clock unless a backend gives one that follows its store's). Rollbacks and
// cleanups after a failure run on a fresh context bounded by
// Config.CleanupTimeout, so that they finish when the caller's has ended.
package cas
