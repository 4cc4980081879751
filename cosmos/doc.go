// Package cosmos stores Helm releases in an Azure Cosmos DB for NoSQL
// container (HELM_DRIVER=cosmos), on the no-transaction protocol of package
// cas: every object (head, part, chunk) is one item, its Version the item's
// ETag, every compare-and-swap a write with IfMatchEtag. No transactional
// batch is used: parts are written first and the head last, as on
// Kubernetes, so a release of any size (each item stays under Cosmos DB's
// 2 MB limit: see MaxItemBytes and the chunk sizes) is atomic for readers.
//
// # Connection string
//
// HELM_DRIVER_COSMOS_CONNECTION_STRING takes Azure's form plus the database
// and container:
//
//	AccountEndpoint=https://ACCOUNT.documents.azure.com:443/;AccountKey=KEY;Database=helm;Container=releases;
//
// Without AccountKey the store authenticates with Azure AD through
// azidentity's default credential chain (workload identity on a cluster).
// Database and Container default to "helm" and "releases" and are created
// when missing (partition key /pk, IndexingPolicy). InsecureSkipVerify=true
// accepts any TLS certificate (test servers, the emulator);
// AllowWeakConsistency=true, an account below the consistency the store
// needs (see Consistency). The key never appears in errors or logs.
//
// # Layout
//
// Partition keys (partitionKey): "h/<namespace>/<release>" for heads, so
// that History and Deployed, Helm's queries by release name, are
// single-partition queries; "p/<namespace>/<kind>/<digest>" for each part;
// "c/<namespace>/<owner UID>" for the chunks of one frame. Listing a
// namespace or all namespaces is a cross-partition query on the indexed
// fields k (kind), ns, n (name), lkv (labels) and lk (label keys); bodies
// and chunk data are not indexed.
//
// # Consistency
//
// The protocol decides from reads (a head that is gone lets a cleanup
// delete its parts), so every read must see every write finished before
// it, by any client: the account's default consistency must be Strong, or
// Bounded Staleness read in the write region. A request can only weaken
// the account's level, so Open checks it (from the account properties the
// SDK reads) and refuses a weaker one unless the connection string says
// AllowWeakConsistency=true (single-replica servers that report Session:
// the emulator, test servers), and refuses accounts with several write
// regions (ETag preconditions hold within one write region only). See
// consistency.go.
package cosmos
