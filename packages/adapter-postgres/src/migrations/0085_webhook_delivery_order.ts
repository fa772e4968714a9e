import type { Migration } from "../kernel/Migrations.ts"

/**
 * Order per record (docs/DECISIONS.md §17): a delivery's record (`review/<id>`) and its event's place in the outbox;
 * a claim passes over a delivery while an earlier one of the same record and webhook is pending or in flight.
 */
export const webhookDeliveryOrderMigration: Migration = {
  id: 85,
  name: "webhook_delivery_order",
  statements: [
    `ALTER TABLE webhook_deliveries ADD COLUMN record_key text, ADD COLUMN event_seq bigint`,
    `CREATE INDEX webhook_deliveries_open_by_record ON webhook_deliveries (organization_id, webhook_id, record_key, event_seq, id)
      WHERE status IN ('pending', 'in_flight') AND record_key IS NOT NULL`
  ]
}
