-- +goose Up
-- A head's body (the engine's sealed record of a revision, ~1-2 KB) in a
-- table of its own, keyed as its head: a summary listing reads the rows of
-- helmstore_releases, and with bodies in line InnoDB keeps eight or so of
-- those rows to a 16 KB page, so that listing 10,000 releases read every
-- page of the table (~4,400 a call) and outgrew a default buffer pool;
-- without them a page holds several times more.
CREATE TABLE helmstore_bodies (
    namespace   VARBINARY(63)  NOT NULL,
    release_key VARBINARY(300) NOT NULL,
    body        LONGBLOB       NOT NULL,
    PRIMARY KEY (namespace, release_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO helmstore_bodies (namespace, release_key, body)
    SELECT namespace, release_key, body FROM helmstore_releases;
ALTER TABLE helmstore_releases DROP COLUMN body;

-- +goose Down
ALTER TABLE helmstore_releases ADD COLUMN body LONGBLOB NOT NULL;
UPDATE helmstore_releases r JOIN helmstore_bodies b
    ON b.namespace = r.namespace AND b.release_key = r.release_key
    SET r.body = b.body;
DROP TABLE helmstore_bodies;
