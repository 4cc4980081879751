-- +goose Up
-- The base (keyframe) of a values or manifest part stored as a delta; ''
-- when the part is stored in full. A head references its bases as it
-- references its parts (helmstore_parts.refs counts them).
ALTER TABLE helmstore_releases
    ADD COLUMN values_base   VARBINARY(64) NOT NULL DEFAULT '',
    ADD COLUMN manifest_base VARBINARY(64) NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE helmstore_releases
    DROP COLUMN manifest_base,
    DROP COLUMN values_base;
