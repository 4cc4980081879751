-- +goose Up
CREATE TABLE helmstore_releases (
    namespace       TEXT    NOT NULL,
    release_key     TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    version         INTEGER NOT NULL,
    status          TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    modified_at     INTEGER NOT NULL DEFAULT 0,
    labels          TEXT    NOT NULL,
    chart_digest    TEXT    NOT NULL,
    values_digest   TEXT    NOT NULL,
    manifest_digest TEXT    NOT NULL,
    body            BLOB    NOT NULL,
    PRIMARY KEY (namespace, release_key)
);
CREATE INDEX helmstore_releases_name ON helmstore_releases (name, namespace, version);
CREATE INDEX helmstore_releases_status ON helmstore_releases (status);

CREATE TABLE helmstore_labels (
    namespace   TEXT NOT NULL,
    release_key TEXT NOT NULL,
    label_key   TEXT NOT NULL,
    label_value TEXT NOT NULL,
    PRIMARY KEY (namespace, release_key, label_key)
);
CREATE INDEX helmstore_labels_value ON helmstore_labels (label_key, label_value);

CREATE TABLE helmstore_parts (
    namespace TEXT    NOT NULL,
    digest    TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    raw_size  INTEGER NOT NULL,
    refs      INTEGER NOT NULL,
    PRIMARY KEY (namespace, digest)
);

CREATE TABLE helmstore_part_chunks (
    namespace TEXT    NOT NULL,
    digest    TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (namespace, digest, seq)
);

-- +goose Down
DROP TABLE helmstore_part_chunks;
DROP TABLE helmstore_parts;
DROP TABLE helmstore_labels;
DROP TABLE helmstore_releases;
