/**
 * The keys an import used to check row by row keep their guarantees when checked per statement (migration 105,
 * docs/DECISIONS.md §36): a file, survey answer or reply needs its review and a review its import job, alone or
 * among valid rows, in the same statement as the parent or after it; no key moves to a missing parent; deleting a
 * review (or its organization) takes its files, answers and reply along, and only those; truncating reviews
 * truncates them; a review's or a job's key cannot change, nor a job go, while rows refer to it. On a server, the
 * parent of an uncommitted child cannot be deleted until that transaction ends, and then goes with the child.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations } from "@feedback/core"
import { Deferred, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { isSqlError } from "effect/sql/SqlError"
import { randomUUID } from "node:crypto"
import { PgStoreLayer } from "../src/PgStore.ts"
import { sqlStateOf } from "../src/kernel/SqlErrors.ts"
import { describeWithServer, freshLayer, storeName } from "./TestDatabase.ts"

const services = (options: { readonly maxConnections?: number } = {}) =>
  freshLayer(
    (target) =>
      Organizations.Organizations.layer.pipe(
        Layer.provideMerge(PgStoreLayer(target)),
        Layer.provideMerge(Kernel.IdGenerator.uuidV7)
      ),
    options
  )

/** The SQLSTATE an effect fails with (it must fail with an SQL error). */
const failsWith = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.flip(effect).pipe(Effect.map((e) => (isSqlError(e) ? sqlStateOf(e) : `not an SQL error: ${String(e)}`)))

const CHILDREN = ["review_files", "review_answers", "review_replies"] as const
type Child = typeof CHILDREN[number]

/** An organization with one product and one import job. */
const setUp = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name })))
      .id as Kernel.OrganizationId
    const product = randomUUID()
    const job = randomUUID()
    yield* sql`INSERT INTO products (organization_id, id, slug, title, created_at, updated_at)
      VALUES (${org}, ${product}, ${"p-" + product}, 'Mug', now(), now())`
    yield* sql`INSERT INTO import_jobs (organization_id, id, type, action, created_at) VALUES (${org}, ${job}, 'reviews', 'create', now())`
    return { org, product, job }
  })

/** Reviews of `org` (`job` may be missing, or null for none) in one statement; answers their ids. */
const insertReviews = (org: string, product: string, jobs: ReadonlyArray<string | null>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = jobs.map(() => randomUUID())
    yield* sql.unsafe(
      `INSERT INTO reviews (organization_id, id, product_id, rating, published, import_job_id, created_at, updated_at)
       SELECT $1::uuid, (x->>0)::uuid, $2::uuid, 5, true, (x->>1)::uuid, now(), now() FROM jsonb_array_elements($3::jsonb) x`,
      [org, product, JSON.stringify(ids.map((id, i) => [id, jobs[i]]))]
    )
    return ids
  })

/** Children of the given reviews (which may be missing) in one statement. */
const insertChildren = (child: Child, org: string, reviewIds: ReadonlyArray<string>) =>
  SqlClient.SqlClient.use((sql) => {
    const rows = JSON.stringify(reviewIds)
    const statement = {
      review_files:
        `INSERT INTO review_files (organization_id, id, review_id, file_name, content_type, size_bytes, url, position)
        SELECT $1::uuid, gen_random_uuid(), r::uuid, 'a.jpg', 'image/jpeg', 1, 'https://cdn.example/a.jpg', o::int
        FROM jsonb_array_elements_text($2::jsonb) WITH ORDINALITY AS x (r, o)`,
      review_answers:
        `INSERT INTO review_answers (organization_id, review_id, position, question_id, label, type, step, steps)
        SELECT $1::uuid, r::uuid, o::int, gen_random_uuid(), 'Fit', 'scale', 1, 5
        FROM jsonb_array_elements_text($2::jsonb) WITH ORDINALITY AS x (r, o)`,
      review_replies:
        `INSERT INTO review_replies (organization_id, id, review_id, body, responder_name, published, created_at, updated_at)
        SELECT $1::uuid, gen_random_uuid(), r::uuid, 'Thanks', 'Shop', true, now(), now()
        FROM jsonb_array_elements_text($2::jsonb) AS x (r)`
    }[child]
    return sql.unsafe(statement, [org, rows])
  })

const countOf = (table: string, where: string, params: ReadonlyArray<unknown>) =>
  SqlClient.SqlClient.use((sql) =>
    sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params as Array<unknown>)
  )
    .pipe(Effect.map((rows) => Number(rows[0]!.n)))

const childrenOf = (child: Child, org: string, reviewId: string) =>
  countOf(child, "organization_id = $1 AND review_id = $2", [org, reviewId])

layer(services(), { timeout: 60_000, excludeTestServices: true })(
  `review keys checked per statement (${storeName})`,
  (it) => {
    it.effect("a file, answer or reply of a missing review is refused, alone or among valid rows; nothing is written", () =>
      Effect.gen(function*() {
        const { org, product } = yield* setUp("Orphans")
        const other = yield* setUp("Other")
        const [review] = yield* insertReviews(org, product, [null])
        const [elsewhere] = yield* insertReviews(other.org, other.product, [null])
        for (const child of CHILDREN) {
          assert.strictEqual(yield* failsWith(insertChildren(child, org, [randomUUID()])), "23503", child)
          assert.strictEqual(yield* failsWith(insertChildren(child, org, [review!, randomUUID()])), "23503", child)
          // The same review id under another organization is not this organization's review.
          assert.strictEqual(yield* failsWith(insertChildren(child, org, [elsewhere!])), "23503", child)
          assert.strictEqual(yield* childrenOf(child, org, review!), 0, `${child}: the failed statements wrote nothing`)
          yield* insertChildren(child, org, [review!])
          assert.strictEqual(yield* childrenOf(child, org, review!), 1, child)
        }
      }).pipe(Effect.orDie))

    it.effect("a review and its children written by one statement pass; its import job must exist", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { org, product, job } = yield* setUp("Jobs")
        assert.strictEqual(yield* failsWith(insertReviews(org, product, [randomUUID()])), "23503")
        assert.strictEqual(yield* failsWith(insertReviews(org, product, [job, null, randomUUID(), job])), "23503")
        assert.strictEqual(yield* countOf("reviews", "organization_id = $1", [org]), 0)
        yield* insertReviews(org, product, [job, null, job])
        assert.strictEqual(yield* countOf("reviews", "organization_id = $1 AND import_job_id = $2", [org, job]), 2)
        // Parent and child in one statement (as an import slice writes them): checked when the statement has run.
        const id = randomUUID()
        yield* sql.unsafe(
          `WITH review AS (INSERT INTO reviews (organization_id, id, product_id, rating, published, import_job_id, created_at, updated_at)
           VALUES ($1, $2, $3, 4, true, $4, now(), now()))
         INSERT INTO review_files (organization_id, id, review_id, file_name, content_type, size_bytes, url, position)
         VALUES ($1, gen_random_uuid(), $2, 'a.jpg', 'image/jpeg', 1, 'https://cdn.example/a.jpg', 0)`,
          [org, id, product, job]
        )
        assert.strictEqual(yield* childrenOf("review_files", org, id), 1)
      }).pipe(Effect.orDie))

    it.effect("no key moves to a missing parent, and no parent key changes or job goes while rows refer to it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { org, product, job } = yield* setUp("Keyed")
        const [review, spare] = yield* insertReviews(org, product, [job, null])
        for (const child of CHILDREN) yield* insertChildren(child, org, [review!])
        const missing = randomUUID()
        for (const child of CHILDREN) {
          assert.strictEqual(
            yield* failsWith(sql.unsafe(`UPDATE ${child} SET review_id = $1 WHERE review_id = $2`, [missing, review])),
            "23503",
            child
          )
          // Moving to a review that exists is what the key allowed.
          yield* sql.unsafe(`UPDATE ${child} SET review_id = $1 WHERE review_id = $2`, [spare, review])
          yield* sql.unsafe(`UPDATE ${child} SET review_id = $1 WHERE review_id = $2`, [review, spare])
        }
        assert.strictEqual(yield* failsWith(sql`UPDATE reviews SET id = ${missing} WHERE id = ${review!}`), "23503")
        assert.strictEqual(
          yield* failsWith(sql`UPDATE reviews SET import_job_id = ${missing} WHERE id = ${spare!}`),
          "23503"
        )
        assert.strictEqual(yield* failsWith(sql`UPDATE import_jobs SET id = ${missing} WHERE id = ${job}`), "23503")
        assert.strictEqual(yield* failsWith(sql`DELETE FROM import_jobs WHERE id = ${job}`), "23503")
        assert.strictEqual(yield* failsWith(sql.unsafe("TRUNCATE import_jobs")), "23503")
        // A review without children may change its id; a job no review refers to may go.
        yield* sql`UPDATE reviews SET id = ${missing} WHERE id = ${spare!}`
        yield* sql`UPDATE reviews SET import_job_id = NULL WHERE id = ${review!}`
        yield* sql`DELETE FROM import_jobs WHERE id = ${job}`
      }).pipe(Effect.orDie))

    it.effect("deleting a review takes its files, answers and reply along, and only those", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { org, product } = yield* setUp("Cascade")
        const [gone, kept] = yield* insertReviews(org, product, [null, null])
        for (const child of CHILDREN) yield* insertChildren(child, org, [gone!, kept!])
        yield* sql`DELETE FROM reviews WHERE organization_id = ${org} AND id = ${gone!}`
        for (const child of CHILDREN) {
          assert.strictEqual(yield* childrenOf(child, org, gone!), 0, child)
          assert.strictEqual(yield* childrenOf(child, org, kept!), 1, child)
        }
      }).pipe(Effect.orDie))

    it.effect("deleting an organization takes its reviews, their children and its import jobs; truncating reviews truncates the children", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const gone = yield* setUp("Gone")
        const kept = yield* setUp("Kept")
        const [a] = yield* insertReviews(gone.org, gone.product, [gone.job])
        const [b] = yield* insertReviews(kept.org, kept.product, [kept.job])
        for (const child of CHILDREN) {
          yield* insertChildren(child, gone.org, [a!])
          yield* insertChildren(child, kept.org, [b!])
        }
        yield* sql`DELETE FROM organizations WHERE organization_id = ${gone.org}`
        for (const child of CHILDREN) {
          assert.strictEqual(yield* countOf(child, "organization_id = $1", [gone.org]), 0, child)
          assert.strictEqual(yield* childrenOf(child, kept.org, b!), 1, child)
        }
        assert.strictEqual(yield* countOf("import_jobs", "organization_id = $1", [gone.org]), 0)
        yield* sql.unsafe("TRUNCATE reviews")
        for (const child of CHILDREN) assert.strictEqual(yield* countOf(child, "true", []), 0, child)
      }).pipe(Effect.orDie))
  }
)

describeWithServer("review keys under concurrency", () => {
  layer(services({ maxConnections: 4 }), { timeout: 60_000, excludeTestServices: true })("two connections", (it) => {
    it.effect("the review of an uncommitted child cannot be deleted until that transaction ends, then goes with it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { org, product } = yield* setUp("Locked")
        const [review] = yield* insertReviews(org, product, [null])
        for (const child of CHILDREN) {
          const inserted = yield* Deferred.make<void>()
          const finish = yield* Deferred.make<void>()
          const writer = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
            yield* insertChildren(child, org, [review!])
            yield* Deferred.succeed(inserted, undefined)
            yield* Deferred.await(finish)
          })))
          yield* Deferred.await(inserted)
          const deleting = sql.withTransaction(Effect.gen(function*() {
            yield* sql.unsafe("SET LOCAL lock_timeout = '300ms'")
            yield* sql`DELETE FROM reviews WHERE organization_id = ${org} AND id = ${review!}`
          }))
          assert.strictEqual(
            yield* failsWith(deleting),
            "55P03",
            `${child}: the delete waits for the inserting transaction`
          )
          yield* Deferred.succeed(finish, undefined)
          yield* Fiber.join(writer)
          assert.strictEqual(yield* childrenOf(child, org, review!), 1, child)
        }
        // Once the writers have committed, the delete takes the review and every committed child along.
        yield* sql`DELETE FROM reviews WHERE organization_id = ${org} AND id = ${review!}`
        for (const child of CHILDREN) assert.strictEqual(yield* childrenOf(child, org, review!), 0, child)
      }).pipe(Effect.orDie))

    it.effect("a child whose review is deleted while it waits is refused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { org, product } = yield* setUp("Raced")
        const [review] = yield* insertReviews(org, product, [null])
        const deleted = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const deleter = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM reviews WHERE organization_id = ${org} AND id = ${review!}`
          yield* Deferred.succeed(deleted, undefined)
          yield* Deferred.await(finish)
        })))
        yield* Deferred.await(deleted)
        const inserting = yield* Effect.forkChild(failsWith(insertChildren("review_files", org, [review!])))
        // The insert is waiting for the delete's lock (seen on the server) before the delete commits.
        yield* sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
          Effect.flatMap(([row]) => row!.waiting > 0 ? Effect.void : Effect.fail("not waiting yet" as const)),
          Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 1_500 }),
          Effect.orDie
        )
        yield* Deferred.succeed(finish, undefined)
        yield* Fiber.join(deleter)
        assert.strictEqual(
          yield* Fiber.join(inserting),
          "23503",
          "the insert waited for the delete, then found no review"
        )
        assert.strictEqual(yield* childrenOf("review_files", org, review!), 0)
      }).pipe(Effect.orDie))
  })
})
