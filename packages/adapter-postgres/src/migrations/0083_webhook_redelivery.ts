import type { Migration } from "../kernel/Migrations.ts"

/**
 * Manual redelivery and pings (docs/DECISIONS.md §17): a redelivery is another row for the same event and webhook, so
 * the one-delivery-per-(event, webhook) rule now holds for first deliveries only; the fan-out still relies on it.
 */
export const webhookRedeliveryMigration: Migration = {
  id: 83,
  name: "webhook_redelivery",
  statements: [
    `ALTER TABLE webhook_deliveries ADD COLUMN redelivery_of uuid`,
    `ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_organization_id_webhook_id_event_id_key`,
    `CREATE UNIQUE INDEX webhook_deliveries_first_per_event ON webhook_deliveries (organization_id, webhook_id, event_id)
      WHERE redelivery_of IS NULL`
  ]
}
