-- +goose Up
-- The summary a listing shows of a revision (driver.Head's ChartName,
-- ChartVersion, AppVersion, Updated and Description), so that List reads
-- neither bodies nor parts. has_summary says they were written: a row
-- stored before this migration reads as 0, and the engine reads that
-- release whole to list it.
ALTER TABLE helmstore_releases ADD COLUMN has_summary INTEGER NOT NULL DEFAULT 0;
ALTER TABLE helmstore_releases ADD COLUMN chart_name TEXT NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ADD COLUMN chart_version TEXT NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ADD COLUMN app_version TEXT NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ADD COLUMN updated TEXT NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ADD COLUMN description TEXT NOT NULL DEFAULT '';
-- A listing reads in (namespace, name, version) order.
CREATE INDEX helmstore_releases_list ON helmstore_releases (namespace, name, version);

-- +goose Down
DROP INDEX helmstore_releases_list;
ALTER TABLE helmstore_releases DROP COLUMN description;
ALTER TABLE helmstore_releases DROP COLUMN updated;
ALTER TABLE helmstore_releases DROP COLUMN app_version;
ALTER TABLE helmstore_releases DROP COLUMN chart_version;
ALTER TABLE helmstore_releases DROP COLUMN chart_name;
ALTER TABLE helmstore_releases DROP COLUMN has_summary;
