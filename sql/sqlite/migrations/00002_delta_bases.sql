-- +goose Up
-- The base (keyframe) of a values or manifest part stored as a delta; ''
-- when the part is stored in full. A head references its bases as it
-- references its parts (helmstore_parts.refs counts them).
ALTER TABLE helmstore_releases ADD COLUMN values_base TEXT NOT NULL DEFAULT '';
ALTER TABLE helmstore_releases ADD COLUMN manifest_base TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE helmstore_releases DROP COLUMN manifest_base;
ALTER TABLE helmstore_releases DROP COLUMN values_base;
