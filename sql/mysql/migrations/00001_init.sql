-- +goose Up
-- Keys, names and labels are ASCII (Kubernetes names and labels) and compared
-- exactly (ascii_bin), which also keeps every index far within InnoDB's
-- 3072-byte key limit.
CREATE TABLE helmstore_releases (
    namespace       VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    release_key     VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    name            VARCHAR(253) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    version         INTEGER      NOT NULL,
    status          VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    owner           VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at      BIGINT       NOT NULL,
    modified_at     BIGINT       NOT NULL DEFAULT 0,
    labels          TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    chart_digest    VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    values_digest   VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    manifest_digest VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    body            LONGBLOB     NOT NULL,
    PRIMARY KEY (namespace, release_key),
    KEY helmstore_releases_name (name, namespace, version),
    KEY helmstore_releases_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE helmstore_labels (
    namespace   VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    release_key VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    label_key   VARCHAR(317) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    label_value VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    PRIMARY KEY (namespace, release_key, label_key),
    KEY helmstore_labels_value (label_key, label_value)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE helmstore_parts (
    namespace VARCHAR(63) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    digest    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind      VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    raw_size  BIGINT      NOT NULL,
    refs      INTEGER     NOT NULL,
    PRIMARY KEY (namespace, digest)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE helmstore_part_chunks (
    namespace VARCHAR(63) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    digest    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    seq       INTEGER     NOT NULL,
    data      LONGBLOB    NOT NULL,
    PRIMARY KEY (namespace, digest, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE helmstore_part_chunks;
DROP TABLE helmstore_parts;
DROP TABLE helmstore_labels;
DROP TABLE helmstore_releases;
