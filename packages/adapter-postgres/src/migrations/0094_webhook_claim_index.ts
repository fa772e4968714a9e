import type { Migration } from "../kernel/Migrations.ts"

/**
 * The claim statement (`PgWebhookStore.claimDeliveries`) walks the webhooks that have pending deliveries and, for
 * each, its oldest pending ones, up to its free slots: both are reads of this partial index, which holds only the
 * pending rows, so a claim costs the same whether the table keeps a thousand delivered rows or ten million. It
 * replaces the index on (created_at, id), which made every claim rank every pending row (a backlog cost its size
 * per claim).
 */
export const webhookClaimIndexMigration: Migration = {
  id: 94,
  name: "webhook_claim_index",
  statements: [
    `CREATE INDEX webhook_deliveries_pending_by_webhook ON webhook_deliveries (organization_id, webhook_id, created_at, id)
      WHERE status = 'pending'`,
    `DROP INDEX webhook_deliveries_pending`
  ]
}
