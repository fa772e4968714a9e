import type { Migration } from "../kernel/Migrations.ts"

/**
 * The embedding host's own id of each tenant (docs/DECISIONS.md §65): optional, and unique among organizations (a
 * unique constraint admits any number of NULLs), so a host finds the organization of its tenant in one lookup.
 */
export const organizationExternalIdsMigration: Migration = {
  id: 150,
  name: "organization_external_ids",
  statements: [
    `ALTER TABLE organizations ADD COLUMN external_id text`,
    `ALTER TABLE organizations ADD CONSTRAINT organizations_external_id_key UNIQUE (external_id)`
  ]
}
