import type { Migration } from "../kernel/Migrations.ts"

export const organizationsMigration: Migration = {
  id: 1,
  name: "organizations",
  statements: [
    `CREATE TABLE organizations (
      organization_id uuid PRIMARY KEY,
      name text NOT NULL,
      api_requests_per_minute integer NOT NULL CHECK (api_requests_per_minute > 0),
      created_at timestamptz NOT NULL
    )`,
    `CREATE TABLE secret_keys (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      permissions text[] NOT NULL,
      key_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      PRIMARY KEY (organization_id, id)
    )`,
    // Authentication looks a key up by hash before the organization is known. Not unique: uniqueness of a
    // 256-bit random key is not something the database needs to police, and a distributed (Citus) table
    // cannot enforce a unique index that leaves out the distribution column.
    `CREATE INDEX secret_keys_by_hash ON secret_keys (key_hash)`,
    `CREATE TABLE publishable_keys (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      key text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE INDEX publishable_keys_newest ON publishable_keys (organization_id, created_at DESC, id DESC)`,
    `CREATE TABLE integrations (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      platform text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE TABLE loyalty_programs (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      site_id uuid,
      status text NOT NULL CHECK (status IN ('draft', 'live')),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE TABLE wishlists (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      customer_id uuid,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    // The outbox. `seq` orders events globally for the dispatcher; the key still leads with the organization.
    `CREATE TABLE domain_events (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      event text NOT NULL,
      data jsonb NOT NULL,
      occurred_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE INDEX domain_events_by_seq ON domain_events (seq)`
  ]
}
