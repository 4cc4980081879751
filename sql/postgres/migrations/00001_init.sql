-- +goose Up
CREATE TABLE helmstore_releases (
    namespace       VARCHAR(63)  NOT NULL,
    release_key     VARCHAR(300) NOT NULL,
    name            VARCHAR(253) NOT NULL,
    version         INTEGER      NOT NULL,
    status          VARCHAR(64)  NOT NULL,
    owner           VARCHAR(64)  NOT NULL,
    created_at      BIGINT       NOT NULL,
    modified_at     BIGINT       NOT NULL DEFAULT 0,
    labels          TEXT         NOT NULL,
    chart_digest    VARCHAR(64)  NOT NULL,
    values_digest   VARCHAR(64)  NOT NULL,
    manifest_digest VARCHAR(64)  NOT NULL,
    body            BYTEA        NOT NULL,
    PRIMARY KEY (namespace, release_key)
);
CREATE INDEX helmstore_releases_name ON helmstore_releases (name, namespace, version);
CREATE INDEX helmstore_releases_status ON helmstore_releases (status);
-- Bodies are zstd frames already: store them out of line, uncompressed.
ALTER TABLE helmstore_releases ALTER COLUMN body SET STORAGE EXTERNAL;

CREATE TABLE helmstore_labels (
    namespace   VARCHAR(63)  NOT NULL,
    release_key VARCHAR(300) NOT NULL,
    label_key   VARCHAR(317) NOT NULL,
    label_value VARCHAR(63)  NOT NULL,
    PRIMARY KEY (namespace, release_key, label_key)
);
CREATE INDEX helmstore_labels_value ON helmstore_labels (label_key, label_value);

CREATE TABLE helmstore_parts (
    namespace VARCHAR(63) NOT NULL,
    digest    VARCHAR(64) NOT NULL,
    kind      VARCHAR(16) NOT NULL,
    raw_size  BIGINT      NOT NULL,
    refs      INTEGER     NOT NULL,
    PRIMARY KEY (namespace, digest)
);

CREATE TABLE helmstore_part_chunks (
    namespace VARCHAR(63) NOT NULL,
    digest    VARCHAR(64) NOT NULL,
    seq       INTEGER     NOT NULL,
    data      BYTEA       NOT NULL,
    PRIMARY KEY (namespace, digest, seq)
);
ALTER TABLE helmstore_part_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- +goose Down
DROP TABLE helmstore_part_chunks;
DROP TABLE helmstore_parts;
DROP TABLE helmstore_labels;
DROP TABLE helmstore_releases;
