-- +goose Up
-- A head's body (the engine's sealed record of a revision, ~1-2 KB) in a
-- table of its own, keyed as its head, so that a summary listing, which
-- reads rows of helmstore_releases alone, reads a small fraction of the
-- pages it read with bodies in line.
CREATE TABLE helmstore_bodies (
    namespace   TEXT NOT NULL,
    release_key TEXT NOT NULL,
    body        BLOB NOT NULL,
    PRIMARY KEY (namespace, release_key)
);
INSERT INTO helmstore_bodies (namespace, release_key, body)
    SELECT namespace, release_key, body FROM helmstore_releases;
ALTER TABLE helmstore_releases DROP COLUMN body;

-- +goose Down
ALTER TABLE helmstore_releases ADD COLUMN body BLOB NOT NULL DEFAULT X'';
UPDATE helmstore_releases SET body = (SELECT b.body FROM helmstore_bodies b
    WHERE b.namespace = helmstore_releases.namespace AND b.release_key = helmstore_releases.release_key);
DROP TABLE helmstore_bodies;
