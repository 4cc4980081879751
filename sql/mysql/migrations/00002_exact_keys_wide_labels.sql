-- +goose Up
-- Exact comparisons: ascii_bin is a PAD SPACE collation, under which
-- 'padns ' = 'padns', so a view on namespace "padns " would read and delete
-- the releases of "padns". Binary strings compare every byte, on MySQL 8 and
-- MariaDB alike, and sort as ascii_bin did.
-- Labels: up to 1,000 custom labels of a 317-byte key and a 63-byte value
-- outgrow TEXT's 64 KiB; MEDIUMTEXT holds 16 MiB.
ALTER TABLE helmstore_releases
    MODIFY namespace       VARBINARY(63)  NOT NULL,
    MODIFY release_key     VARBINARY(300) NOT NULL,
    MODIFY name            VARBINARY(253) NOT NULL,
    MODIFY status          VARBINARY(64)  NOT NULL,
    MODIFY owner           VARBINARY(64)  NOT NULL,
    MODIFY labels          MEDIUMTEXT     CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY chart_digest    VARBINARY(64)  NOT NULL,
    MODIFY values_digest   VARBINARY(64)  NOT NULL,
    MODIFY manifest_digest VARBINARY(64)  NOT NULL;

ALTER TABLE helmstore_labels
    MODIFY namespace   VARBINARY(63)  NOT NULL,
    MODIFY release_key VARBINARY(300) NOT NULL,
    MODIFY label_key   VARBINARY(317) NOT NULL,
    MODIFY label_value VARBINARY(63)  NOT NULL;

ALTER TABLE helmstore_parts
    MODIFY namespace VARBINARY(63) NOT NULL,
    MODIFY digest    VARBINARY(64) NOT NULL,
    MODIFY kind      VARBINARY(16) NOT NULL;

ALTER TABLE helmstore_part_chunks
    MODIFY namespace VARBINARY(63) NOT NULL,
    MODIFY digest    VARBINARY(64) NOT NULL;

-- +goose Down
ALTER TABLE helmstore_part_chunks
    MODIFY namespace VARCHAR(63) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY digest    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

ALTER TABLE helmstore_parts
    MODIFY namespace VARCHAR(63) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY digest    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY kind      VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

ALTER TABLE helmstore_labels
    MODIFY namespace   VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY release_key VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY label_key   VARCHAR(317) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY label_value VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL;

ALTER TABLE helmstore_releases
    MODIFY namespace       VARCHAR(63)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY release_key     VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY name            VARCHAR(253) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY status          VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY owner           VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY labels          TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY chart_digest    VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY values_digest   VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    MODIFY manifest_digest VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL;
