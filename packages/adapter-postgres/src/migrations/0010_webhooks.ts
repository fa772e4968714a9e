import type { Migration } from "../kernel/Migrations.ts"

/**
 * Webhooks, their deliveries, the outbox's fan-out mark and the dispatchers' leases (docs/DECISIONS.md §7).
 *
 * - `domain_events.fan_out_pending`: true until the dispatcher has created the event's deliveries. Rows that
 *   exist when this migration runs are marked done (no webhook could have wanted them); later rows start pending.
 *   Dispatchers take pending rows with `FOR UPDATE SKIP LOCKED`, so several processes never fan out one event twice.
 * - `webhook_deliveries.payload`: the exact bytes POSTed (text, not jsonb, which would reorder keys).
 *   `(organization_id, webhook_id, event_id)` is unique: one delivery per event and webhook, whatever happens.
 * - `webhook_dispatchers` is infrastructure, not tenant data (like `schema_migrations`): one lease row per running
 *   dispatcher process, keyed by its random id.
 */
export const webhooksMigration: Migration = {
  id: 10,
  name: "webhooks",
  statements: [
    `ALTER TABLE domain_events ADD COLUMN fan_out_pending boolean NOT NULL DEFAULT false`,
    `ALTER TABLE domain_events ALTER COLUMN fan_out_pending SET DEFAULT true`,
    `CREATE INDEX domain_events_fan_out_pending ON domain_events (seq) WHERE fan_out_pending`,
    `CREATE TABLE webhooks (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      url text NOT NULL,
      events text[] NOT NULL,
      hmac_secret text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE INDEX webhooks_newest ON webhooks (organization_id, created_at DESC, id DESC)`,
    `CREATE TABLE webhook_deliveries (
      organization_id uuid NOT NULL,
      id uuid NOT NULL,
      webhook_id uuid NOT NULL,
      event_id uuid NOT NULL,
      event text NOT NULL,
      idempotency_key uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'in_flight', 'delivered', 'failed')),
      payload text NOT NULL,
      response_status integer,
      error text,
      duration_ms integer,
      created_at timestamptz NOT NULL,
      attempted_at timestamptz,
      claimed_by uuid,
      PRIMARY KEY (organization_id, id),
      FOREIGN KEY (organization_id, webhook_id) REFERENCES webhooks (organization_id, id) ON DELETE CASCADE,
      UNIQUE (organization_id, webhook_id, event_id),
      UNIQUE (organization_id, webhook_id, idempotency_key)
    )`,
    `CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (organization_id, webhook_id, created_at DESC, id DESC)`,
    `CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at, id) WHERE status = 'pending'`,
    `CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (organization_id, webhook_id) WHERE status = 'in_flight'`,
    `CREATE TABLE webhook_dispatchers (
      id uuid PRIMARY KEY,
      heartbeat_at timestamptz NOT NULL
    )`
  ]
}
