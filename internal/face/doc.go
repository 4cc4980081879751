// Package face is what the two faces, packages helm3 and helm4, share: a
// face's store, generic over its Helm's release type as the engine is;
// opening a store (the registry, encryption, the engine); the options and
// their defaults; and Collect, GarbageOf and Verify. A face is then its
// Helm's types and sentinels, its Init and Configure, and re-exports: helm3
// embeds Store[release.Release] whole, helm4 embeds Store[v1.Release] and
// takes and returns Helm 4's Releaser where Helm 4's driver interface
// does.
package face
