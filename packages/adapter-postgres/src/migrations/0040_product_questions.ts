import type { Migration } from "../kernel/Migrations.ts"

/**
 * Product questions, their answers and the email outbox. Keys lead with organization_id (Citus distribution
 * column). Timestamps are written from canonical millisecond Timestamps, as the keyset cursors require.
 */
export const productQuestionsMigration: Migration = {
  id: 40,
  name: "product_questions",
  statements: [
    `CREATE TABLE product_questions (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      product_id uuid NOT NULL,
      site_id uuid,
      customer_id uuid,
      body text NOT NULL,
      asker_name text,
      asker_email text,
      notify_by_email boolean NOT NULL,
      published boolean NOT NULL,
      moderated_at timestamptz,
      flagged boolean NOT NULL DEFAULT false,
      flags jsonb NOT NULL DEFAULT '[]'::jsonb,
      instant_answer_id uuid,
      answered_at timestamptz,
      notified_at timestamptz,
      source text NOT NULL,
      answer_count integer NOT NULL DEFAULT 0,
      published_answer_count integer NOT NULL DEFAULT 0,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id),
      FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id),
      FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
      FOREIGN KEY (organization_id, site_id) REFERENCES sites (organization_id, id)
    )`,
    `CREATE INDEX product_questions_by_created ON product_questions (organization_id, created_at, id)`,
    `CREATE INDEX product_questions_by_product ON product_questions (organization_id, product_id)`,
    `CREATE TABLE product_question_answers (
      organization_id uuid NOT NULL,
      id uuid NOT NULL,
      product_question_id uuid NOT NULL,
      body text NOT NULL,
      author_type text NOT NULL,
      author_name text,
      user_id uuid,
      customer_id uuid,
      published boolean NOT NULL,
      moderated_at timestamptz,
      flagged boolean NOT NULL DEFAULT false,
      flags jsonb NOT NULL DEFAULT '[]'::jsonb,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id),
      FOREIGN KEY (organization_id, product_question_id) REFERENCES product_questions (organization_id, id) ON DELETE CASCADE
    )`,
    `CREATE INDEX product_question_answers_by_question
      ON product_question_answers (organization_id, product_question_id, created_at, id)`,
    // One notice per question at most: the asker is emailed once (docs/DECISIONS.md §6), enforced here as well.
    `CREATE TABLE email_outbox (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      product_question_id uuid NOT NULL,
      product_question_answer_id uuid NOT NULL,
      recipient text NOT NULL,
      subject text NOT NULL,
      text text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'logged', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      claimed_by text,
      claimed_at timestamptz,
      error text,
      created_at timestamptz NOT NULL,
      finished_at timestamptz,
      PRIMARY KEY (organization_id, id),
      UNIQUE (organization_id, product_question_id),
      FOREIGN KEY (organization_id, product_question_id) REFERENCES product_questions (organization_id, id) ON DELETE CASCADE
    )`,
    `CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at, created_at, id) WHERE status = 'pending'`,
    `CREATE INDEX email_outbox_claimed ON email_outbox (claimed_at) WHERE status = 'sending'`
  ]
}
