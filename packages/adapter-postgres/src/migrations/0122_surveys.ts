import type { Migration } from "../kernel/Migrations.ts"

/**
 * Surveys (docs/DECISIONS.md §48): one row per survey with its steps and products as jsonb, and what the background
 * workers claim by: `next_due_at` (and `next_position`) of the next email step, null while nothing is due or a step
 * is in flight (`claimed_by`, `claimed_at`, `claimed_position`, and `claimed_sending_at` once it is handed to the
 * transport). The key leads with organization_id; an order has at
 * most one survey per flow (a unique key, so concurrent enrolments cannot both succeed). Flows and orders may be
 * deleted while their surveys stay (cancelled), so neither is a foreign key. A survey that becomes due wakes the
 * workers of every process (`feedback_work`, migration 93).
 */
export const surveysMigration: Migration = {
  id: 122,
  name: "surveys",
  statements: [
    `CREATE TABLE surveys (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      flow_id uuid NOT NULL,
      order_id uuid NOT NULL,
      customer_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('scheduled', 'sent', 'completed', 'cancelled', 'skipped')),
      reason text,
      products jsonb NOT NULL,
      steps jsonb NOT NULL,
      token text NOT NULL,
      url text NOT NULL,
      expires_at timestamptz NOT NULL,
      completed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      next_due_at timestamptz,
      next_position integer,
      claimed_by text,
      claimed_at timestamptz,
      claimed_position integer,
      claimed_sending_at timestamptz,
      PRIMARY KEY (organization_id, id),
      UNIQUE (organization_id, flow_id, order_id),
      FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id)
    )`,
    `CREATE INDEX surveys_due ON surveys (next_due_at, id) WHERE next_due_at IS NOT NULL AND claimed_by IS NULL`,
    `CREATE INDEX surveys_claimed ON surveys (claimed_at) WHERE claimed_by IS NOT NULL`,
    `CREATE INDEX surveys_by_order ON surveys (organization_id, order_id)`,
    `CREATE INDEX surveys_by_created ON surveys (organization_id, created_at, id)`,
    `CREATE INDEX surveys_by_updated ON surveys (organization_id, updated_at, id)`,
    `CREATE INDEX surveys_by_token ON surveys (token)`,
    `CREATE TRIGGER surveys_work AFTER INSERT OR UPDATE OF next_due_at ON surveys
      FOR EACH ROW WHEN (NEW.next_due_at IS NOT NULL AND NEW.claimed_by IS NULL)
      EXECUTE FUNCTION feedback_notify_work('surveys')`
  ]
}
