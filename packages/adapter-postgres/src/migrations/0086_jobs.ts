import type { Migration } from "../kernel/Migrations.ts"

/**
 * Import and export jobs (docs/DECISIONS.md §20). `jobs.record` is the whole job as JSON text (what the API shows
 * and what running it needs); the columns beside it are the ones queries select on. Text, not jsonb: a skipped
 * row's message may quote input with escapes jsonb refuses (`\u0000`). `job_rows` holds an import's rows as
 * received; `export_chunks` an export's file in order.
 */
export const jobsMigration: Migration = {
  id: 86,
  name: "jobs",
  statements: [
    `CREATE TABLE jobs (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      action text NOT NULL,
      status text NOT NULL,
      receiving boolean NOT NULL,
      lease_owner text,
      lease_expires_at timestamptz,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      record text NOT NULL,
      PRIMARY KEY (organization_id, id)
    )`,
    `CREATE INDEX jobs_runnable ON jobs (created_at, id) WHERE status IN ('queued', 'running')`,
    `CREATE INDEX jobs_expiring ON jobs (expires_at) WHERE expires_at IS NOT NULL`,
    `CREATE TABLE job_rows (
      organization_id uuid NOT NULL,
      job_id uuid NOT NULL,
      row_number integer NOT NULL,
      data text NOT NULL,
      PRIMARY KEY (organization_id, job_id, row_number),
      FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id) ON DELETE CASCADE
    )`,
    `CREATE TABLE export_chunks (
      organization_id uuid NOT NULL,
      job_id uuid NOT NULL,
      seq integer NOT NULL,
      data text NOT NULL,
      PRIMARY KEY (organization_id, job_id, seq),
      FOREIGN KEY (organization_id, job_id) REFERENCES jobs (organization_id, id) ON DELETE CASCADE
    )`
  ]
}
