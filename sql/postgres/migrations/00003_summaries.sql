-- +goose Up
-- The summary a listing shows of a revision (driver.Head's ChartName,
-- ChartVersion, AppVersion, Updated and Description), so that List reads
-- neither bodies nor parts. has_summary says they were written: a row
-- stored before this migration reads as false, and the engine reads that
-- release whole to list it.
ALTER TABLE helmstore_releases
    ADD COLUMN has_summary   BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN chart_name    TEXT    NOT NULL DEFAULT '',
    ADD COLUMN chart_version TEXT    NOT NULL DEFAULT '',
    ADD COLUMN app_version   TEXT    NOT NULL DEFAULT '',
    ADD COLUMN updated       TEXT    NOT NULL DEFAULT '',
    ADD COLUMN description   TEXT    NOT NULL DEFAULT '';
-- Namespaces and names compare and sort byte by byte (as Go compares
-- strings, and as MySQL's binary and SQLite's columns do) whatever the
-- database's collation: a listing's order, its cursor and its name prefix
-- (a range of names) are then the engine's (driver.CompareHeads).
ALTER TABLE helmstore_releases
    ALTER COLUMN namespace TYPE VARCHAR(63)  COLLATE "C",
    ALTER COLUMN name      TYPE VARCHAR(253) COLLATE "C";
-- A listing reads in (namespace, name, version) order.
CREATE INDEX helmstore_releases_list ON helmstore_releases (namespace, name, version);

-- +goose Down
DROP INDEX helmstore_releases_list;
ALTER TABLE helmstore_releases
    ALTER COLUMN name      TYPE VARCHAR(253) COLLATE "default",
    ALTER COLUMN namespace TYPE VARCHAR(63)  COLLATE "default";
ALTER TABLE helmstore_releases
    DROP COLUMN description,
    DROP COLUMN updated,
    DROP COLUMN app_version,
    DROP COLUMN chart_version,
    DROP COLUMN chart_name,
    DROP COLUMN has_summary;
