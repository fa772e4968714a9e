/** Product questions, their answers and the email outbox over PostgreSQL. */
import { jsonValue } from "../kernel/SqlRows.ts"
import { relatedCatalogColumns } from "../catalog/CatalogColumns.ts"
import { toCustomer, toProduct } from "../catalog/CatalogRows.ts"
import { Kernel, Questions } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { columnsFrom, compileListQuery, type ListSqlMapping } from "../kernel/FilterSql.ts"
import { toNullableTimestamp, toTimestamp } from "../kernel/SqlRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

type Row = Record<string, any>

const json = (v: unknown): any => jsonValue(v)
const jsonb = (v: unknown): string => JSON.stringify(v)

const toQuestion = (r: Row): Questions.ProductQuestionRecord => ({
  id: r.id,
  productId: r.productId,
  siteId: r.siteId ?? null,
  customerId: r.customerId ?? null,
  body: r.body,
  askerName: r.askerName ?? null,
  askerEmail: r.askerEmail ?? null,
  notifyByEmail: r.notifyByEmail,
  published: r.published,
  moderatedAt: toNullableTimestamp(r.moderatedAt),
  flagged: r.flagged,
  flags: json(r.flags),
  instantAnswerId: r.instantAnswerId ?? null,
  answeredAt: toNullableTimestamp(r.answeredAt),
  notifiedAt: toNullableTimestamp(r.notifiedAt),
  source: r.source,
  answerCount: Number(r.answerCount),
  publishedAnswerCount: Number(r.publishedAnswerCount),
  metadata: json(r.metadata),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

const toAnswer = (r: Row): Questions.ProductQuestionAnswer => ({
  id: r.id,
  productQuestionId: r.productQuestionId,
  body: r.body,
  authorType: r.authorType,
  authorName: r.authorName ?? null,
  userId: r.userId ?? null,
  customerId: r.customerId ?? null,
  published: r.published,
  moderatedAt: toNullableTimestamp(r.moderatedAt),
  flagged: r.flagged,
  flags: json(r.flags),
  metadata: json(r.metadata),
  createdAt: toTimestamp(r.createdAt),
  updatedAt: toTimestamp(r.updatedAt)
})

const toNotice = (r: Row): Questions.EmailNotice => ({
  id: r.id,
  organizationId: r.organizationId,
  productQuestionId: r.productQuestionId,
  productQuestionAnswerId: r.productQuestionAnswerId,
  recipient: r.recipient,
  subject: r.subject,
  text: r.text,
  status: r.status,
  attempts: Number(r.attempts),
  nextAttemptAt: toTimestamp(r.nextAttemptAt),
  claimedBy: r.claimedBy ?? null,
  claimedAt: toNullableTimestamp(r.claimedAt),
  error: r.error ?? null,
  createdAt: toTimestamp(r.createdAt),
  finishedAt: toNullableTimestamp(r.finishedAt)
})

/** GET /product-questions: the catalog's fields over `q` (question), `p` (its product), `c` (its customer). */
const productQuestionListMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: "q.id",
    published: "q.published",
    flagged: "q.flagged",
    moderatedAt: "q.moderated_at",
    answeredAt: "q.answered_at",
    source: "q.source",
    metadata: "q.metadata",
    createdAt: "q.created_at",
    updatedAt: "q.updated_at",
    "product.id": "p.id",
    "customer.id": "c.id",
    ...relatedCatalogColumns
  }),
  id: "q.id",
  search: ["q.body", "q.asker_name", "q.asker_email", "p.title"]
}

/** How an address appears in a stored webhook body (`JSON.stringify`d envelope), and its replacement. */
const askerEmailJson = (email: string): string => `"askerEmail":${JSON.stringify(email)}`
const BLANK_ASKER_EMAIL = `"askerEmail":null`

const answeredCondition = {
  true: " AND q.published_answer_count > 0",
  false: " AND q.published_answer_count = 0"
} as const

export const PgProductQuestionRepository = Layer.effect(
  Questions.ProductQuestionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Questions.ProductQuestionRepository.of({
      list: (organizationId, request, answered) =>
        Effect.gen(function*() {
          const q = compileListQuery(request, productQuestionListMapping, 1)
          const rows = yield* sql.unsafe<Row>(
            `SELECT q.* FROM product_questions q
            LEFT JOIN products p ON p.organization_id = q.organization_id AND p.id = q.product_id
            LEFT JOIN customers c ON c.organization_id = q.organization_id AND c.id = q.customer_id
           WHERE q.organization_id = $1::uuid${answered === undefined ? "" : answeredCondition[`${answered}`]}
             AND ${q.where}
           ORDER BY ${q.orderBy}
           LIMIT ${request.limit + 1}`,
            [organizationId, ...q.params]
          )
          const records = rows.map(toQuestion)
          return Kernel.toPage(
            records,
            request,
            Kernel.positionOf(request, {
              get: (r: Questions.ProductQuestionRecord, path) => (r as unknown as Row)[path],
              id: (r) => r.id,
              searchValues: () => []
            })
          )
        }).pipe(orDie),
      findById: (organizationId, id, options) =>
        sql<Row>`SELECT * FROM product_questions WHERE organization_id = ${organizationId} AND id = ${id}
          ${sql.literal(options?.forUpdate === true ? "FOR UPDATE" : "")}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toQuestion)),
          orDie
        ),
      insert: (q) =>
        sql`INSERT INTO product_questions (organization_id, id, product_id, site_id, customer_id, body, asker_name,
            asker_email, notify_by_email, published, moderated_at, flagged, flags, instant_answer_id, answered_at,
            notified_at, source, answer_count, published_answer_count, metadata, created_at, updated_at)
          VALUES (${q.organizationId}, ${q.id}, ${q.productId}, ${q.siteId}, ${q.customerId}, ${q.body}, ${q.askerName},
            ${q.askerEmail}, ${q.notifyByEmail}, ${q.published}, ${q.moderatedAt}, ${q.flagged}, ${
          jsonb(q.flags)
        }::jsonb,
            ${q.instantAnswerId}, ${q.answeredAt}, ${q.notifiedAt}, ${q.source}, ${q.answerCount},
            ${q.publishedAnswerCount}, ${jsonb(q.metadata)}::jsonb, ${q.createdAt}, ${q.updatedAt})`.pipe(
          Effect.asVoid,
          orDie
        ),
      update: (q) =>
        sql`UPDATE product_questions SET
            site_id = ${q.siteId}, customer_id = ${q.customerId}, asker_name = ${q.askerName},
            asker_email = ${q.askerEmail}, notify_by_email = ${q.notifyByEmail}, published = ${q.published},
            moderated_at = ${q.moderatedAt}, flagged = ${q.flagged}, flags = ${jsonb(q.flags)}::jsonb,
            instant_answer_id = ${q.instantAnswerId}, answered_at = ${q.answeredAt}, source = ${q.source},
            answer_count = ${q.answerCount}, published_answer_count = ${q.publishedAnswerCount},
            metadata = ${jsonb(q.metadata)}::jsonb, updated_at = ${q.updatedAt}
          WHERE organization_id = ${q.organizationId} AND id = ${q.id}`.pipe(Effect.asVoid, orDie),
      markNotified: (organizationId, id, at) =>
        sql<{ id: string }>`UPDATE product_questions SET notified_at = COALESCE(notified_at, ${at})
          WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          orDie
        ),
      delete: (organizationId, id) =>
        Effect.gen(function*() {
          const rows = yield* sql<Row>`DELETE FROM product_questions WHERE organization_id = ${organizationId}
            AND id = ${id} RETURNING *`
          const deleted = rows[0]
          if (deleted === undefined) return Option.none()
          // Answers and notices go with the question (ON DELETE CASCADE); webhook bodies already built from its
          // events and the events themselves lose the address (bodies keep their bytes otherwise).
          if (deleted.askerEmail !== null && deleted.askerEmail !== undefined) {
            yield* sql`UPDATE webhook_deliveries SET payload = replace(payload, ${
              askerEmailJson(deleted.askerEmail)
            }, ${BLANK_ASKER_EMAIL})
              WHERE organization_id = ${organizationId}
                AND event_id IN (SELECT e.id FROM domain_events e WHERE e.organization_id = ${organizationId}
                  AND e.event LIKE 'productQuestion.%' AND e.data ->> 'id' = ${id})`
          }
          yield* sql`UPDATE domain_events SET data = jsonb_set(data, '{askerEmail}', 'null'::jsonb)
            WHERE organization_id = ${organizationId} AND event LIKE 'productQuestion.%'
              AND data ->> 'id' = ${id} AND data ->> 'askerEmail' IS NOT NULL`
          return Option.some(toQuestion(deleted))
        }).pipe(orDie),
      insertAnswer: (a: Questions.OwnedAnswer) =>
        sql`INSERT INTO product_question_answers (organization_id, id, product_question_id, body, author_type,
            author_name, user_id, customer_id, published, moderated_at, flagged, flags, metadata, created_at, updated_at)
          VALUES (${a.organizationId}, ${a.id}, ${a.productQuestionId}, ${a.body}, ${a.authorType}, ${a.authorName},
            ${a.userId}, ${a.customerId}, ${a.published}, ${a.moderatedAt}, ${a.flagged}, ${jsonb(a.flags)}::jsonb,
            ${jsonb(a.metadata)}::jsonb, ${a.createdAt}, ${a.updatedAt})`.pipe(Effect.asVoid, orDie),
      findAnswer: (organizationId, questionId, answerId) =>
        sql<Row>`SELECT * FROM product_question_answers
          WHERE organization_id = ${organizationId} AND id = ${answerId} AND product_question_id = ${questionId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toAnswer)),
          orDie
        ),
      updateAnswer: (a: Questions.OwnedAnswer) =>
        sql`UPDATE product_question_answers SET body = ${a.body}, published = ${a.published}, moderated_at = ${a.moderatedAt},
            author_name = ${a.authorName}, metadata = ${jsonb(a.metadata)}::jsonb, updated_at = ${a.updatedAt}
          WHERE organization_id = ${a.organizationId} AND id = ${a.id}`.pipe(Effect.asVoid, orDie),
      deleteAnswer: (organizationId, answerId) =>
        sql`DELETE FROM product_question_answers WHERE organization_id = ${organizationId} AND id = ${answerId}`.pipe(
          Effect.asVoid,
          orDie
        ),
      answersOf: (organizationId, questionIds) =>
        questionIds.length === 0
          ? Effect.succeed([])
          : sql<Row>`SELECT * FROM product_question_answers WHERE organization_id = ${organizationId}
            AND product_question_id IN ${sql.in([...new Set(questionIds)])} ORDER BY created_at, id`.pipe(
            Effect.map((rows) => rows.map(toAnswer)),
            orDie
          ),
      productsByIds: (organizationId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : sql<Row>`SELECT * FROM products WHERE organization_id = ${organizationId}
            AND id IN ${sql.in([...new Set(ids)])}`.pipe(Effect.map((rows) => rows.map(toProduct)), orDie),
      customersByIds: (organizationId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : sql<Row>`SELECT * FROM customers WHERE organization_id = ${organizationId}
            AND id IN ${sql.in([...new Set(ids)])}`.pipe(Effect.map((rows) => rows.map(toCustomer)), orDie),
      siteExists: (organizationId, id) =>
        sql<{ id: string }>`SELECT id FROM sites WHERE organization_id = ${organizationId} AND id = ${id}`.pipe(
          Effect.map((rows) => rows.length > 0),
          orDie
        )
    })
  })
)

export const PgEmailOutboxRepository = Layer.effect(
  Questions.EmailOutboxRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Questions.EmailOutboxRepository.of({
      enqueue: (n) =>
        sql<
          { id: string }
        >`INSERT INTO email_outbox (organization_id, id, product_question_id, product_question_answer_id,
            recipient, subject, text, status, attempts, next_attempt_at, claimed_by, claimed_at, error, created_at,
            finished_at)
          VALUES (${n.organizationId}, ${n.id}, ${n.productQuestionId}, ${n.productQuestionAnswerId}, ${n.recipient},
            ${n.subject}, ${n.text}, ${n.status}, ${n.attempts}, ${n.nextAttemptAt}, ${n.claimedBy}, ${n.claimedAt},
            ${n.error}, ${n.createdAt}, ${n.finishedAt})
          ON CONFLICT (organization_id, product_question_id) DO NOTHING RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          orDie
        ),
      // SKIP LOCKED: concurrent workers each take a different notice instead of waiting for one another.
      claimNext: (workerId, at) =>
        sql<Row>`UPDATE email_outbox o SET status = 'sending', claimed_by = ${workerId}, claimed_at = ${at},
            attempts = o.attempts + 1
          FROM (SELECT organization_id, id FROM email_outbox
                 WHERE status = 'pending' AND next_attempt_at <= ${at}
                 ORDER BY next_attempt_at, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) due
          WHERE o.organization_id = due.organization_id AND o.id = due.id
          RETURNING o.*`.pipe(
          Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toNotice)),
          orDie
        ),
      complete: (organizationId, id, workerId, c) =>
        (c.status === "pending"
          ? sql<{ id: string }>`UPDATE email_outbox SET status = 'pending', error = ${c.error},
              next_attempt_at = ${c.nextAttemptAt}, claimed_by = NULL, claimed_at = NULL
            WHERE organization_id = ${organizationId} AND id = ${id} AND status = 'sending'
              AND claimed_by = ${workerId} RETURNING id`
          : sql<{ id: string }>`UPDATE email_outbox SET status = ${c.status}, error = ${c.error}, finished_at = ${c.at}
            WHERE organization_id = ${organizationId} AND id = ${id} AND status = 'sending'
              AND claimed_by = ${workerId} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0), orDie),
      failInterrupted: (claimedBefore, at, error) =>
        sql<{ id: string }>`UPDATE email_outbox SET status = 'failed', error = ${error}, finished_at = ${at}
          WHERE status = 'sending' AND claimed_at < ${claimedBefore} RETURNING id`.pipe(
          Effect.map((rows) => rows.length),
          orDie
        ),
      deleteForQuestion: (organizationId, productQuestionId) =>
        sql<{ id: string }>`DELETE FROM email_outbox WHERE organization_id = ${organizationId}
          AND product_question_id = ${productQuestionId} RETURNING id`.pipe(
          Effect.map((rows) => rows.length),
          orDie
        ),
      listForOrganization: (organizationId) =>
        sql<Row>`SELECT * FROM email_outbox WHERE organization_id = ${organizationId} ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map(toNotice)),
          orDie
        )
    })
  })
)
