/**
 * Query plans of the review list (migration 20): on a generated data set, EXPLAIN of the very statements the
 * store runs shows index scans for the default list, every sort, a later page, and the product.id /
 * customer.id / published / createdAt filters — no sequential scan of reviews and, where the index delivers the
 * order, no sort. Search (migration 92): a rare term's matches come from the trigram indexes, a common one's page
 * from the list index, and both give the answers of the plain scan. Runs on embedded PGlite, or on the PostgreSQL server of TEST_DATABASE_URL.
 */
import { assert, layer } from "@effect/vitest"
import { Kernel, Organizations, Reviews, type StoreServices } from "@feedback/core"
import { Effect, Layer, Result, Schema } from "effect"
import { testIssuer } from "@feedback/testing"
import { SqlClient } from "effect/sql"
import {
  reviewPageRows,
  reviewPageStatement,
  reviewPageStatementWithIncludes,
  SEARCH_CANDIDATES_MAX,
  searchCandidatesStatement
} from "../src/reviews/PgReviewStore.ts"
import { PgStoreLayer } from "../src/PgStore.ts"
import { toCustomer, toProduct } from "../src/catalog/CatalogRows.ts"
import {
  type AnswerDbRow,
  type FileDbRow,
  type ReplyDbRow,
  toReply,
  toReviewFile,
  toSurveyAnswer
} from "../src/reviews/PgReviewRows.ts"
import { datasetId, generateReviewDataset } from "../src/testing/ReviewDataset.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

const explain = (organizationId: string, params: Record<string, string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const request = Result.getOrThrow(Kernel.parseListRequest(params, Reviews.reviewListEndpoint, testIssuer()))
    const statement = reviewPageStatement(organizationId, request)
    const rows = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params)
    const raw = Object.values(rows[0]!)[0]
    const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>
    return nodesOf(plan[0]!.Plan)
  })

const REVIEWS = 20_000
const PRODUCTS = 200

layer(
  Organizations.Organizations.layer.pipe(
    Layer.provideMerge(
      freshLayer(PgStoreLayer).pipe(Layer.provideMerge(Kernel.IdGenerator.uuidV7)) as Layer.Layer<
        SqlClient.SqlClient | Kernel.IdGenerator | StoreServices
      >
    )
  ),
  { timeout: 300_000 }
)(`review list query plans (${storeName})`, (it) => {
  it.effect("each list shape is answered from an index", () =>
    Effect.gen(function*() {
      const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Plans" }))
      yield* generateReviewDataset({ organizationId: org.id, reviews: REVIEWS, products: PRODUCTS })
      // A second organization, so "the organization's rows" is not "the whole table".
      const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other" }))
      yield* generateReviewDataset({ organizationId: other.id, reviews: 2_000, products: 20 })

      const product = datasetId(org.id, "p", 7)
      const customer = datasetId(org.id, "c", 11)
      // The generator's ids are valid UUIDs the API accepts, and JavaScript computes the same ones.
      const ofProduct = yield* Reviews.ReviewRepository.use((r) =>
        r.list(
          org.id,
          Result.getOrThrow(
            Kernel.parseListRequest(
              { limit: "250", filter: JSON.stringify({ "product.id": product }), include: "product" },
              Reviews.reviewListEndpoint,
              testIssuer()
            )
          )
        )
      )
      assert.strictEqual(ofProduct.data.length, REVIEWS / PRODUCTS)
      assert.isTrue(ofProduct.data.every((r) => r.product?.slug === "product-7" && Schema.is(Kernel.ReviewId)(r.id)))
      assert.strictEqual(ofProduct.data[0]!.product!.reviewCount, REVIEWS / PRODUCTS)
      const cases: ReadonlyArray<{
        readonly name: string
        readonly params: Record<string, string>
        readonly indexes: ReadonlyArray<string>
        readonly sorted: boolean
      }> = [
        { name: "default (-createdAt)", params: {}, indexes: ["reviews_by_created"], sorted: true },
        { name: "createdAt", params: { sort: "createdAt" }, indexes: ["reviews_by_created"], sorted: true },
        { name: "rating", params: { sort: "rating" }, indexes: ["reviews_by_rating"], sorted: true },
        { name: "-rating", params: { sort: "-rating" }, indexes: ["reviews_by_rating"], sorted: true },
        { name: "moderatedAt", params: { sort: "moderatedAt" }, indexes: ["reviews_by_moderated_asc"], sorted: true },
        {
          name: "-moderatedAt",
          params: { sort: "-moderatedAt" },
          indexes: ["reviews_by_moderated_desc"],
          sorted: true
        },
        {
          name: "product.id",
          params: { filter: JSON.stringify({ "product.id": product }) },
          indexes: ["reviews_by_product"],
          sorted: true
        },
        {
          name: "customer.id",
          params: { filter: JSON.stringify({ "customer.id": customer }) },
          indexes: ["reviews_by_customer"],
          sorted: false
        },
        {
          name: "published: false",
          params: { filter: JSON.stringify({ published: false }) },
          indexes: ["reviews_by_published"],
          sorted: true
        },
        {
          name: "createdAt $gte",
          params: { filter: JSON.stringify({ createdAt: { $gte: "2025-01-01T05:00:00Z" } }) },
          indexes: ["reviews_by_created"],
          sorted: true
        },
        {
          name: "product.id + published + createdAt $gte (the benchmark's filter)",
          params: {
            filter: JSON.stringify({
              "product.id": product,
              published: true,
              createdAt: { $gte: "2025-01-01T01:00:00Z" }
            })
          },
          indexes: ["reviews_by_product"],
          sorted: false
        }
      ]
      const report: Array<string> = []
      for (const c of cases) {
        const nodes = yield* explain(org.id, { limit: "50", ...c.params })
        const scans = nodes.filter((n) => n["Relation Name"] === "reviews")
        const summary = `${c.name}: ${
          nodes.map((n) => n["Node Type"] + (n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`)).join(" > ")
        }`
        report.push(summary)
        assert.isFalse(scans.some((n) => n["Node Type"] === "Seq Scan"), summary)
        assert.isTrue(scans.some((n) => c.indexes.includes(n["Index Name"] ?? "")), summary)
        if (c.sorted) assert.isFalse(nodes.some((n) => n["Node Type"] === "Sort"), summary)
      }
      // A later page: the cursor becomes part of the index condition, so page 100 reads ~50 rows, not 5,000.
      const sql = yield* SqlClient.SqlClient
      let params: Record<string, string> = { limit: "50" }
      for (let page = 0; page < 3; page++) {
        const request = Result.getOrThrow(Kernel.parseListRequest(params, Reviews.reviewListEndpoint, testIssuer()))
        const statement = reviewPageStatement(org.id, request)
        const rows = yield* sql.unsafe<{ id: string; createdAt: Date }>(statement.text, statement.params)
        assert.strictEqual(rows.length, 51)
        const last = rows[49]!
        params = {
          limit: "50",
          cursor: Kernel.encodeCursor(
            { value: last.createdAt.toISOString(), id: last.id },
            Kernel.cursorBindingOf(request),
            testIssuer()
          )
        }
      }
      const later = yield* explain(org.id, params)
      const laterSummary = later.map((n) =>
        n["Node Type"] + (n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`)
      ).join(" > ")
      report.push(`page 4 (-createdAt): ${laterSummary}`)
      assert.isTrue(later.some((n) => n["Index Name"] === "reviews_by_created"), laterSummary)
      assert.isFalse(later.some((n) => n["Node Type"] === "Seq Scan" || n["Node Type"] === "Sort"), laterSummary)
      const indexCond = later.map((n) => (n as { "Index Cond"?: string })["Index Cond"] ?? "").join(" ")
      report.push(`page 4 index condition: ${indexCond}`)
      assert.include(indexCond, "created_at", "the cursor position is an index condition, not a filter")
      // A page with every include (docs/DECISIONS.md §33): the page from its index, each related record and count
      // by a key probe per row, never a scan or a hash of a whole table.
      for (const params of [{}, { filter: JSON.stringify({ "product.id": product, published: true }) }]) {
        const request = Result.getOrThrow(
          Kernel.parseListRequest({ limit: "50", ...params }, Reviews.reviewListEndpoint, testIssuer())
        )
        const statement = reviewPageStatementWithIncludes(org.id, request, Reviews.reviewIncludeNames)
        const rows = yield* sql.unsafe<Record<string, unknown>>(
          `EXPLAIN (FORMAT JSON) ${statement.text}`,
          statement.params
        )
        const raw = Object.values(rows[0]!)[0]
        const nodes = nodesOf(
          ((typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>)[0]!.Plan
        )
        const summary = `every include ${JSON.stringify(params)}: ${
          nodes.map((n) => n["Node Type"] + (n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`)).join(" > ")
        }`
        report.push(summary)
        assert.isFalse(nodes.some((n) => n["Node Type"] === "Seq Scan" || n["Node Type"].startsWith("Hash")), summary)
        for (
          const table of [
            "customers",
            "products",
            "review_replies",
            "review_files",
            "review_answers",
            "review_value_counts",
            "import_jobs"
          ]
        ) {
          assert.isTrue(
            nodes.some((n) => n["Relation Name"] === table && n["Node Type"].startsWith("Index")),
            `${table}: ${summary}`
          )
        }
      }
      console.log(`Review list plans on ${storeName} (${REVIEWS} reviews):\n  ${report.join("\n  ")}`)
    }))

  it.effect("search: a rare term is served by the trigram indexes, a common one by the list index; same answers as a scan", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Search plans" }))
      yield* generateReviewDataset({ organizationId: org.id, reviews: 6_000, products: 60 })
      // VACUUM moves the freshly written rows out of the GIN indexes' pending lists (as autovacuum does), which the
      // planner otherwise prices as a scan of their own.
      yield* sql`VACUUM ANALYZE reviews, customers, products`
      const plan = (statement: { readonly text: string; readonly params: ReadonlyArray<unknown> }) =>
        Effect.gen(function*() {
          const rows = yield* sql.unsafe<Record<string, unknown>>(
            `EXPLAIN (FORMAT JSON) ${statement.text}`,
            statement.params
          )
          const raw = Object.values(rows[0]!)[0]
          return nodesOf(
            ((typeof raw === "string" ? JSON.parse(raw) : raw) as ReadonlyArray<{ Plan: PlanNode }>)[0]!.Plan
          )
        })
      const describe = (nodes: ReadonlyArray<PlanNode>) =>
        nodes.map((n) => n["Node Type"] + (n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`)).join(" > ")

      // No match at all (the worst case of a scan): the reviews' texts are probed through their trigram indexes, and
      // no review is read. (Customers and products here are few, so the planner may read them directly.)
      const none = yield* plan(searchCandidatesStatement(org.id, "zebra quartz"))
      const summary = describe(none)
      for (const index of ["reviews_search_title", "reviews_search_body"]) {
        assert.isTrue(none.some((n) => n["Index Name"] === index), `${index} unused: ${summary}`)
      }
      assert.isFalse(none.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "reviews"), summary)

      // Each term through each step of the store's search (window, candidates, scan: forced by the limits given)
      // against the scan statement alone. Pages are the rows of the statements, ids in order.
      const parse = (params: Record<string, string>) =>
        Result.getOrThrow(Kernel.parseListRequest(params, Reviews.reviewListEndpoint, testIssuer()))
      const idsOf = (rows: ReadonlyArray<{ readonly id: unknown }>) => rows.map((r) => String(r.id))
      const scanIds = (params: Record<string, string>) =>
        Effect.gen(function*() {
          const statement = reviewPageStatement(org.id, parse(params))
          return idsOf(yield* sql.unsafe<{ id: string }>(statement.text, statement.params))
        })
      const steps = [
        { name: "default", limits: undefined },
        { name: "no window", limits: { window: 1, candidatesMax: SEARCH_CANDIDATES_MAX } },
        { name: "no window, few candidates allowed", limits: { window: 1, candidatesMax: 5 } }
      ]
      const counts: Array<string> = []
      for (
        const term of ["zebra quartz", "REVIEW 123", "review 4321", "Product 7", "great", "GREAT", "broken", "@example"]
      ) {
        const found = yield* sql.unsafe<{ id: string }>(
          searchCandidatesStatement(org.id, term).text,
          searchCandidatesStatement(org.id, term).params
        )
        counts.push(
          `${term}: ${found.length > SEARCH_CANDIDATES_MAX ? `> ${SEARCH_CANDIDATES_MAX}` : found.length} candidates`
        )
        for (
          const params of [{ search: term, limit: "50" }, { search: term, limit: "20", sort: "rating" }, {
            search: term,
            limit: "5",
            filter: JSON.stringify({ published: true })
          }]
        ) {
          const expected = yield* scanIds(params)
          for (const step of steps) {
            const rows = yield* reviewPageRows(sql, org.id, parse(params), step.limits).pipe(
              Effect.map((read) => read.rows)
            )
            assert.deepStrictEqual(idsOf(rows), expected, `${step.name}: ${JSON.stringify(params)}`)
          }
          // And through the repository, as the API reads it.
          const page = yield* Reviews.ReviewRepository.use((r) => r.list(org.id, parse(params)))
          assert.deepStrictEqual(page.data.map((r) => r.id as string), expected.slice(0, Number(params.limit)))
        }
      }
      // Both kinds of term occur: some rare, some common.
      assert.isTrue(counts.some((c) => c.includes(">")) && counts.some((c) => !c.includes(">")), counts.join("; "))
      console.log(`Review search on ${storeName}: ${counts.join("; ")}\n  no match: ${summary}`)
    }))

  // The page statement names its columns itself and runs without the client's renames; it must read every field,
  // jsonb keys included, exactly as the other read paths do (`find`, through the client's renames).
  it.effect("a listed review reads exactly as the same review fetched by id", () =>
    Effect.gen(function*() {
      const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Same rows" }))
      yield* generateReviewDataset({ organizationId: org.id, reviews: 30, products: 3 })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE reviews SET metadata = ${`{"order_id":"1","plain":"x","deep_key":"{\\"a_b\\":1}"}`}::jsonb,
          flags = ${`[{"code":"spam_words","detail":"two_words","score":0.5}]`}::jsonb, redacted_at = created_at,
          original_title = 'o', submit_seconds = 12.5, import_row = 3
        WHERE organization_id = ${org.id}`
      yield* sql`UPDATE customers SET metadata = ${`{"loyalty_tier":"gold"}`}::jsonb, first_name = NULL, email_opt_out_at = created_at
        WHERE organization_id = ${org.id}`
      yield* sql`UPDATE products SET metadata = ${`{"sku_code":"A-1"}`}::jsonb, average_rating = 4.25 WHERE organization_id = ${org.id}`
      // Reviews rated 3 or more have a reply, two files and two survey answers.
      yield* sql`INSERT INTO review_replies (organization_id, id, review_id, body, responder_name, published, metadata, created_at, updated_at)
        SELECT organization_id, gen_random_uuid(), id, 'Thanks', 'Shop', true, '{"agent_id":"7"}', created_at, updated_at
        FROM reviews WHERE organization_id = ${org.id} AND rating >= 3`
      yield* sql`INSERT INTO review_files (organization_id, id, review_id, file_name, content_type, size_bytes, url, position)
        SELECT organization_id, gen_random_uuid(), id, 'f' || n || '.png', 'image/png', 1000 * n, 'https://x.test/' || n, n
        FROM reviews, generate_series(0, 1) AS n WHERE organization_id = ${org.id} AND rating >= 3`
      yield* sql`INSERT INTO review_answers (organization_id, review_id, position, question_id, label, type, step, steps, low_label,
          high_label, middle_label, option_labels)
        SELECT organization_id, id, n, gen_random_uuid(), 'Q' || n, 'scale', n, 5, 'low', NULL, NULL, '["a_b","c"]'
        FROM reviews, generate_series(0, 1) AS n WHERE organization_id = ${org.id} AND rating >= 3`
      const page = yield* Reviews.ReviewRepository.use((r) =>
        r.list(
          org.id,
          Result.getOrThrow(
            Kernel.parseListRequest(
              { limit: "250", include: "customer,product,response,files,answers" },
              Reviews.reviewListEndpoint,
              testIssuer()
            )
          )
        )
      )
      assert.strictEqual(page.data.length, 30)
      assert.isTrue(page.data.some((r) => r.response !== null) && page.data.some((r) => r.files!.length === 2))
      for (const listed of page.data) {
        const { answers, customer, files, product, response, ...record } = listed
        const [reply] = yield* sql<
          ReplyDbRow
        >`SELECT * FROM review_replies WHERE organization_id = ${org.id} AND review_id = ${listed.id}`
        assert.deepStrictEqual(response, reply === undefined ? null : toReply(reply))
        const fileRows = yield* sql<
          FileDbRow
        >`SELECT * FROM review_files WHERE organization_id = ${org.id} AND review_id = ${listed.id} ORDER BY position`
        assert.deepStrictEqual(files, fileRows.map((f) => toReviewFile(f)))
        const answerRows = yield* sql<
          AnswerDbRow
        >`SELECT * FROM review_answers WHERE organization_id = ${org.id} AND review_id = ${listed.id} ORDER BY position`
        assert.deepStrictEqual(answers, answerRows.map((a) => toSurveyAnswer(a)))
        const found = yield* Reviews.ReviewRepository.use((r) => r.get(org.id, listed.id, []))
        assert.deepStrictEqual(record, found._tag === "Some" ? found.value : undefined)
        // The included records read as the catalog reads them (`SELECT *` through the client's renames).
        const [c] = yield* sql<
          Record<string, unknown>
        >`SELECT * FROM customers WHERE organization_id = ${org.id} AND id = ${listed.customerId}`
        assert.deepStrictEqual(customer, c === undefined ? null : toCustomer(c))
        const [p] = yield* sql<
          Record<string, unknown>
        >`SELECT * FROM products WHERE organization_id = ${org.id} AND id = ${listed.productId}`
        assert.deepStrictEqual(product, toProduct(p!))
      }
      assert.isTrue(page.data.some((r) => r.customer !== null))
    }))
})
