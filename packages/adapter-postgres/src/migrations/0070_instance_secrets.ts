import type { Migration } from "../kernel/Migrations.ts"

/**
 * Secrets of the whole installation (today the generated cursor key), shared by every process on the database.
 * Like `schema_migrations` this is not a tenant table, so its key does not start with `organization_id`: a secret
 * that seals every organization's cursors belongs to no organization (and would be a reference table under Citus).
 */
export const instanceSecretsMigration: Migration = {
  id: 70,
  name: "instance_secrets",
  statements: [
    `CREATE TABLE instance_secrets (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  ]
}
