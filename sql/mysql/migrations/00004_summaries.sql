-- +goose Up
-- The summary a listing shows of a revision (driver.Head's ChartName,
-- ChartVersion, AppVersion, Updated and Description), so that List reads
-- neither bodies nor parts. has_summary says they were written: a row
-- stored before this migration reads as 0, and the engine reads that
-- release whole to list it. The chart's fields and the time fit 255
-- characters and the description 1 MiB (summaryLimits in sqlbackend's
-- write.go: longer ones are not stored, has_summary stays 0); MEDIUMTEXT
-- holds 16 MiB, TEXT only 64 KiB. A TEXT column takes its default as an
-- expression on MySQL 8. A listing reads in (namespace, name, version)
-- order (helmstore_releases_list).
ALTER TABLE helmstore_releases
    ADD COLUMN has_summary   TINYINT      NOT NULL DEFAULT 0,
    ADD COLUMN chart_name    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    ADD COLUMN chart_version VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    ADD COLUMN app_version   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    ADD COLUMN updated       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
    ADD COLUMN description   MEDIUMTEXT   CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT (''),
    ADD KEY helmstore_releases_list (namespace, name, version);

-- +goose Down
ALTER TABLE helmstore_releases
    DROP KEY helmstore_releases_list,
    DROP COLUMN description,
    DROP COLUMN updated,
    DROP COLUMN app_version,
    DROP COLUMN chart_version,
    DROP COLUMN chart_name,
    DROP COLUMN has_summary;
