import type { Migration } from "../kernel/Migrations.ts"

/**
 * An export's file is stored as chunks of text (migration 86) that TOAST compresses: with the default `pglz` that
 * compression is most of the database's work per chunk written, and `lz4` compresses such text as well for a fraction
 * of it (docs/DECISIONS.md §39). Only new values are written with it; stored chunks stay readable as they are. A
 * server built without lz4 keeps `pglz`: the chunks read the same either way.
 */
export const exportChunksLz4Migration: Migration = {
  id: 180,
  name: "export_chunks_lz4",
  statements: [
    `DO $$
    BEGIN
      ALTER TABLE export_chunks ALTER COLUMN data SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported THEN
      NULL;
    END
    $$`
  ]
}
