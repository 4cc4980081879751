-- +goose Up
-- A head's body (the engine's sealed record of a revision, ~1-2 KB) in a
-- table of its own, keyed as its head, so that a summary listing, which
-- reads rows of helmstore_releases alone, reads a small fraction of the
-- pages it read with bodies in line. A role confined by NamespaceAccess
-- before this table existed has no grant on it (its reads are refused)
-- until NamespaceAccess's statements run again.
CREATE TABLE helmstore_bodies (
    namespace   VARCHAR(63)  NOT NULL,
    release_key VARCHAR(300) NOT NULL,
    body        BYTEA        NOT NULL,
    PRIMARY KEY (namespace, release_key)
);
-- Bodies are zstd frames already: out of line when large, uncompressed.
ALTER TABLE helmstore_bodies ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO helmstore_bodies (namespace, release_key, body)
    SELECT namespace, release_key, body FROM helmstore_releases;
ALTER TABLE helmstore_releases DROP COLUMN body;

-- +goose Down
ALTER TABLE helmstore_releases ADD COLUMN body BYTEA NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ALTER COLUMN body DROP DEFAULT;
ALTER TABLE helmstore_releases ALTER COLUMN body SET STORAGE EXTERNAL;
UPDATE helmstore_releases r SET body = b.body FROM helmstore_bodies b
    WHERE b.namespace = r.namespace AND b.release_key = r.release_key;
DROP TABLE helmstore_bodies;
