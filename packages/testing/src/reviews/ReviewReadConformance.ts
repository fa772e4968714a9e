/**
 * Conformance of the review read side (spec: GET /reviews, GET /reviews/{id}; docs/DECISIONS.md §4) on every store:
 * keyset pages in every sort, stable under concurrent inserts, cursors bound to their query, every filterable
 * field, search, includes, and organization scoping. Expectations are computed here in plain JavaScript from the
 * seeded records, so every store is held to the same answers.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Organizations, Reviews } from "@feedback/core"
import { asDashboard, asKey } from "../CallerFixtures.ts"
import { makeImportJob, makeSeedReview, type SeedReview, StoreTestKit } from "../StoreTestKit.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import fc from "fast-check"

const BASE = Date.parse("2026-03-01T00:00:00.000Z")
const at = (ms: number) => new Date(BASE + ms).toISOString() as Kernel.Timestamp.Timestamp
const MINUTE = 60_000
const HOUR = 60 * MINUTE

const answer: Reviews.SurveyAnswer = {
  questionId: "0190a000-0000-7000-8000-000000000001",
  label: "How likely are you to recommend us?",
  type: "scale",
  step: 1,
  steps: 3,
  lowLabel: "Unlikely",
  highLabel: "Very likely",
  middleLabel: null,
  optionLabels: ["0", "5", "10"]
}

const SURVEY = "0190a000-0000-7000-8000-0000000000aa" as Kernel.SurveyId

interface Fixture {
  readonly organizationId: Kernel.OrganizationId
  readonly otherOrganizationId: Kernel.OrganizationId
  readonly otherReviewId: Kernel.ReviewId
  readonly products: ReadonlyArray<Catalog.Product>
  readonly customers: ReadonlyArray<Catalog.Customer>
  readonly seeds: ReadonlyArray<SeedReview>
  readonly as: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Kernel.CurrentCaller>>
}

/**
 * 40 reviews over 3 products and 3 customers with deliberate ties (pairs share createdAt, moderatedAt repeats),
 * nulls (no customer, no title, unmoderated, no IP), and a second organization with reviews of its own.
 */
const makeFixture = (count = 40) =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Reviews" }))
    const other = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Other reviews" }))
    const catalogs = yield* Catalog.Catalogs
    const as = asDashboard(org.id)
    const products: Array<Catalog.Product> = []
    for (
      const [slug, title, color] of [["mug", "Blue Mug", "blue"], ["kettle", "Red Kettle", "red"], [
        "teapot",
        "Green Teapot",
        "green"
      ]] as const
    ) {
      yield* TestClock.adjust("1 second")
      products.push(yield* as(catalogs.createProduct({ slug, title, metadata: { color } })))
    }
    const customers: Array<Catalog.Customer> = []
    for (
      const [email, firstName, lastName, optOut, tier] of [
        ["ada@example.com", "Ada", "Lovelace", false, "gold"],
        ["grace@example.com", "Grace", "Hopper", true, "silver"],
        ["alan@example.com", "Alan", null, false, null]
      ] as const
    ) {
      yield* TestClock.adjust("1 second")
      customers.push(
        yield* as(catalogs.createCustomer({
          email,
          firstName,
          lastName,
          emailOptOut: optOut,
          ...(optOut ? { emailOptOutSource: "unsubscribe" } : {}),
          ...(tier === null ? {} : { metadata: { tier } })
        }))
      )
    }
    const job = yield* makeImportJob("reviews", "create")
    const seeds: Array<SeedReview> = []
    for (let i = 0; i < count; i++) {
      seeds.push(yield* seedFor(org.id, i, products, customers, job))
    }
    yield* StoreTestKit.use((s) => s.insertReviews(seeds))
    const otherProduct = yield* asDashboard(other.id)(catalogs.createProduct({ slug: "mug", title: "Blue Mug" }))
    const otherSeeds: Array<SeedReview> = []
    for (let i = 0; i < 5; i++) {
      otherSeeds.push(
        yield* makeSeedReview(other.id, {
          productId: otherProduct.id,
          fields: {
            createdAt: at(i * MINUTE),
            rating: 5,
            browserFingerprint: "fp0",
            ipAddress: "10.0.0.0",
            title: "Blue"
          }
        })
      )
    }
    yield* StoreTestKit.use((s) => s.insertReviews(otherSeeds))
    const refreshed: Array<Catalog.Product> = []
    for (const p of products) refreshed.push(yield* as(catalogs.getProduct(p.id)))
    return {
      organizationId: org.id,
      otherOrganizationId: other.id,
      otherReviewId: otherSeeds[0]!.review.id,
      products: refreshed,
      customers,
      seeds,
      as
    } as Fixture
  })

const seedFor = (
  organizationId: Kernel.OrganizationId,
  i: number,
  products: ReadonlyArray<Catalog.Product>,
  customers: ReadonlyArray<Catalog.Customer>,
  job: Reviews.ImportJob
): Effect.Effect<SeedReview, never, Kernel.IdGenerator> =>
  makeSeedReview(organizationId, {
    productId: products[i % 3]!.id,
    customerId: i % 5 === 4 ? null : customers[i % 3]!.id,
    fields: {
      title: i % 8 === 0 ? null : `Review ${i} ${["great", "poor", "Solid"][i % 3]}`,
      body: `Body number ${i}${i % 9 === 0 ? " with ÉCLAT" : ""}`,
      rating: 1 + (i % 5),
      published: i % 4 !== 0,
      flagged: i % 7 === 0,
      moderatedAt: i % 3 === 0 ? null : at((i % 4) * HOUR),
      surveyId: i % 5 === 0 ? SURVEY : null,
      ipAddress: i % 6 === 0 ? null : `10.0.0.${i % 4}`,
      browserFingerprint: i % 5 === 1 ? null : `fp${i % 3}`,
      metadata: i % 2 === 0 ? { channel: i % 4 === 0 ? "email" : "widget" } : {},
      createdAt: at(Math.floor(i / 2) * MINUTE),
      updatedAt: at(Math.floor(i / 2) * MINUTE)
    },
    ...(i % 3 === 0 ? { reply: { body: `Thanks ${i}` } } : {}),
    files: i % 4,
    answers: i % 2 === 0 ? [answer, { ...answer, step: 2, label: "Anything else?" }] : [],
    ...(i % 5 === 0 ? { importJob: { job, row: i } } : {})
  })

/** Every page of a list, following nextCursor; fails the test on a repeated id. */
const walk = (fx: Fixture, params: Kernel.ListParams, between?: (page: number) => Effect.Effect<void, never, any>) =>
  Effect.gen(function*() {
    const reviews = yield* Reviews.Reviews
    const all: Array<Reviews.Review> = []
    let cursor: string | null = null
    let page = 0
    do {
      const result: { readonly data: ReadonlyArray<Reviews.Review>; readonly nextCursor: string | null } = yield* fx.as(
        reviews.list(cursor === null ? params : { ...params, cursor })
      )
      all.push(...result.data)
      cursor = result.nextCursor
      page++
      if (cursor !== null && between !== undefined) yield* between(page)
    } while (cursor !== null && page < 1_000)
    const ids = all.map((r) => r.id)
    assert.strictEqual(new Set(ids).size, ids.length, "a review appeared on two pages")
    return all
  })

const sortOf = (value: string): Kernel.Sort => {
  const descending = value.startsWith("-")
  const field = descending ? value.slice(1) : value
  return { field, direction: descending ? "desc" : "asc", type: Reviews.reviewFilterCatalog.fields.get(field)! }
}

const expectedOrder = (records: ReadonlyArray<Reviews.ReviewRecord>, sort: Kernel.Sort): Array<string> =>
  [...records]
    .map((r) => ({
      id: r.id,
      at: { value: Kernel.normalizeValue(sort.type, (r as Record<string, unknown>)[sort.field]), id: r.id }
    }))
    .sort((a, b) => Kernel.compareKeyset(sort, a.at, b.at))
    .map((r) => r.id)

/** The record view of a listed review (extras removed). */
const recordOf = (review: Reviews.Review): Reviews.ReviewRecord => {
  const { importJob: _a, customer: _b, product: _c, response: _d, files: _e, answers: _f, collisions: _g, ...record } =
    review
  return record
}

const issuesOf = (error: { readonly _tag: string }) => (error as Kernel.InvalidRequest).issues.map((i) => i.path)

export const reviewReadConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 180_000 })("reviews (read side)", (it) => {
    it.effect("the default list is the organization's reviews, newest first, with the stored fields only", () =>
      Effect.gen(function*() {
        const reviews = yield* Reviews.Reviews
        const fx = yield* makeFixture()
        const page = yield* fx.as(reviews.list({}))
        assert.strictEqual(page.data.length, 40)
        assert.strictEqual(page.nextCursor, null)
        const records = fx.seeds.map((s) => s.review)
        assert.deepStrictEqual(page.data.map((r) => r.id), expectedOrder(records, sortOf("-createdAt")))
        const byId = new Map(records.map((r) => [r.id as string, r]))
        for (const review of page.data) {
          assert.deepStrictEqual(review, byId.get(review.id))
          for (const extra of Reviews.reviewIncludeNames) assert.isFalse(extra in review, `${extra} must be absent`)
        }
        const small = yield* fx.as(reviews.list({ limit: "7" }))
        assert.strictEqual(small.data.length, 7)
        assert.isString(small.nextCursor)
      }))

    it.effect("walking every page in every sort returns each review exactly once, in keyset order", () =>
      Effect.gen(function*() {
        const fx = yield* makeFixture()
        const records = fx.seeds.map((s) => s.review)
        for (const sort of ["rating", "-rating", "createdAt", "-createdAt", "moderatedAt", "-moderatedAt"]) {
          for (const limit of [1, 7, 40]) {
            const all = yield* walk(fx, { sort, limit: String(limit) })
            assert.deepStrictEqual(
              all.map((r) => r.id),
              expectedOrder(records, sortOf(sort)),
              `sort ${sort} limit ${limit}`
            )
          }
        }
      }))

    it.effect("a filtered walk stays exact while reviews are inserted between pages", () =>
      Effect.gen(function*() {
        const fx = yield* makeFixture()
        const filter = JSON.stringify({ published: true })
        // Every review of the organization and whether it is published.
        const known = new Map(fx.seeds.map((s) => [s.review.id as string, s.review.published]))
        let n = 0
        for (const sort of ["-createdAt", "rating", "-moderatedAt"]) {
          const before = new Set([...known].filter(([, published]) => published).map(([id]) => id))
          const all = yield* walk(fx, { sort, filter, limit: "4" }, () =>
            Effect.gen(function*() {
              const batch: Array<SeedReview> = []
              for (let k = 0; k < 3; k++) {
                n++
                batch.push(
                  yield* makeSeedReview(fx.organizationId, {
                    productId: fx.products[n % 3]!.id,
                    fields: {
                      rating: 1 + (n * 3) % 5,
                      published: n % 2 === 0,
                      moderatedAt: n % 4 === 0 ? null : at(((n * 7) % 5) * HOUR),
                      createdAt: at((n % 2 === 0 ? -1 : 100) * MINUTE * n)
                    }
                  })
                )
              }
              for (const seed of batch) known.set(seed.review.id, seed.review.published)
              yield* StoreTestKit.use((s) => s.insertReviews(batch))
            }))
          const seen = all.map((r) => r.id as string)
          for (const id of before) {
            assert.include(seen, id, `${sort}: a review that existed before the walk was skipped`)
          }
          for (const r of all) assert.isTrue(r.published && known.get(r.id) === true)
          assert.isAbove(seen.length - before.size, 0, `${sort}: some reviews inserted during the walk were listed`)
        }
      }))

    it.effect("a cursor is bound to its sort, filter and search: reusing it with others is InvalidRequest", () =>
      Effect.gen(function*() {
        const reviews = yield* Reviews.Reviews
        const fx = yield* makeFixture()
        const first = yield* fx.as(reviews.list({ limit: "5", filter: "{\"published\":true}" }))
        const cursor = first.nextCursor!
        for (
          const params of [
            { sort: "rating" },
            { sort: "-rating" },
            { filter: "{\"published\":false}" },
            { filter: "" },
            { filter: "{\"published\":true}", search: "great" }
          ]
        ) {
          const error = yield* Effect.flip(
            fx.as(reviews.list({ limit: "5", filter: "{\"published\":true}", ...params, cursor }))
          )
          assert.strictEqual(error._tag, "InvalidRequest")
          assert.deepStrictEqual(issuesOf(error), ["cursor"])
        }
        const garbled = yield* Effect.flip(fx.as(reviews.list({ cursor: cursor.slice(0, -3) + "xyz" })))
        assert.deepStrictEqual(issuesOf(garbled), ["cursor"])
        // The same query in another key order keeps the cursor valid; another limit too.
        const next = yield* fx.as(reviews.list({ limit: "6", filter: "{ \"published\" : true }", cursor }))
        assert.strictEqual(next.data.length, 6)
      }))

    it.effect("every filterable field filters, alone and combined with $and/$or and search", () =>
      Effect.gen(function*() {
        const fx = yield* makeFixture()
        const product = new Map(fx.products.map((p) => [p.id as string, p]))
        const customer = new Map(fx.customers.map((c) => [c.id as string, c]))
        const [mug, kettle] = fx.products
        const [ada, grace] = fx.customers
        const r5 = fx.seeds[5]!.review
        const cases: ReadonlyArray<readonly [object, (r: Reviews.ReviewRecord) => boolean]> = [
          [{ id: r5.id }, (r) => r.id === r5.id],
          [{ id: { $in: [r5.id, fx.seeds[6]!.review.id] } }, (r) => r.id === r5.id || r.id === fx.seeds[6]!.review.id],
          [{ rating: { $gte: 4 } }, (r) => r.rating >= 4],
          [{ rating: 2.5 }, () => false],
          [{ rating: { $ne: 3 } }, (r) => r.rating !== 3],
          [{ published: false }, (r) => !r.published],
          [{ flagged: true }, (r) => r.flagged],
          [{ moderatedAt: null }, (r) => r.moderatedAt === null],
          [{ moderatedAt: { $gte: at(2 * HOUR) } }, (r) => r.moderatedAt !== null && r.moderatedAt >= at(2 * HOUR)],
          [
            { moderatedAt: { $lt: "2026-03-01T02:00:00+01:00" } },
            (r) => r.moderatedAt !== null && r.moderatedAt < at(HOUR)
          ],
          [{ surveyId: SURVEY }, (r) => r.surveyId === SURVEY],
          [{ surveyId: { $exists: false } }, (r) => r.surveyId === null],
          [{ ipAddress: "10.0.0.1" }, (r) => r.ipAddress === "10.0.0.1"],
          [{ ipAddress: { $nin: ["10.0.0.1"] } }, (r) => r.ipAddress !== "10.0.0.1"],
          [
            { browserFingerprint: { $in: ["fp0", "fp2"] } },
            (r) => r.browserFingerprint === "fp0" || r.browserFingerprint === "fp2"
          ],
          [{ "metadata.channel": "email" }, (r) => r.metadata["channel"] === "email"],
          [{ "metadata.channel": { $exists: false } }, (r) => r.metadata["channel"] === undefined],
          [
            { createdAt: { $gte: at(10 * MINUTE), $lt: at(15 * MINUTE) } },
            (r) => r.createdAt >= at(10 * MINUTE) && r.createdAt < at(15 * MINUTE)
          ],
          [{ updatedAt: { $lt: at(12 * MINUTE) } }, (r) => r.updatedAt < at(12 * MINUTE)],
          [{ "product.id": mug!.id }, (r) => r.productId === mug!.id],
          [{ "product.slug": "kettle" }, (r) => r.productId === kettle!.id],
          [{ "product.title": { $gt: "Green" } }, (r) => product.get(r.productId)!.title > "Green"],
          [{ "product.metadata.color": "green" }, (r) => product.get(r.productId)!.metadata["color"] === "green"],
          [
            { "product.createdAt": { $lte: mug!.createdAt } },
            (r) => product.get(r.productId)!.createdAt <= mug!.createdAt
          ],
          [{ "customer.id": ada!.id }, (r) => r.customerId === ada!.id],
          [{ "customer.id": null }, (r) => r.customerId === null],
          [{ "customer.email": "grace@example.com" }, (r) => r.customerId === grace!.id],
          [
            { "customer.firstName": { $in: ["Ada", "Alan"] } },
            (r) => ["Ada", "Alan"].includes(customer.get(r.customerId ?? "")?.firstName ?? "")
          ],
          [
            { "customer.lastName": { $exists: false } },
            (r) => (customer.get(r.customerId ?? "")?.lastName ?? null) === null
          ],
          [{ "customer.metadata.tier": "gold" }, (r) => customer.get(r.customerId ?? "")?.metadata["tier"] === "gold"],
          [{ "customer.emailOptOut": true }, (r) => customer.get(r.customerId ?? "")?.emailOptOut === true],
          [
            { "customer.emailOptOutSource": { $ne: "unsubscribe" } },
            (r) => customer.get(r.customerId ?? "")?.emailOptOutSource !== "unsubscribe"
          ],
          [{ "customer.createdAt": { $gte: grace!.createdAt } }, (r) => {
            const c = customer.get(r.customerId ?? "")
            return c !== undefined && c.createdAt >= grace!.createdAt
          }],
          [
            { $or: [{ rating: 1 }, { "product.slug": "mug", published: false }] },
            (r) => r.rating === 1 || (r.productId === mug!.id && !r.published)
          ],
          [
            { $and: [{ rating: { $gte: 2 } }, { rating: { $lte: 3 } }], flagged: false },
            (r) => r.rating >= 2 && r.rating <= 3 && !r.flagged
          ]
        ]
        const records = fx.seeds.map((s) => s.review)
        for (const [doc, predicate] of cases) {
          const expected = records.filter(predicate).map((r) => r.id).sort()
          const all = yield* walk(fx, { filter: JSON.stringify(doc), limit: "9" })
          assert.deepStrictEqual(all.map((r) => r.id).sort(), expected, JSON.stringify(doc))
        }
        // Every catalog field appears in at least one case above.
        const covered = new Set(
          cases.flatMap(([doc]) => JSON.stringify(doc).match(/"[a-zA-Z.]+"(?=:)/g) ?? []).map((s) => s.slice(1, -1))
        )
        for (const field of Reviews.reviewFilterCatalog.fields.keys()) {
          assert.isTrue(covered.has(field), `no case filters ${field}`)
        }
        // Search: title, body, customer email / names and product title, case-insensitively, ANDed with the filter.
        const searches: ReadonlyArray<readonly [string, (r: Reviews.ReviewRecord) => boolean]> = [
          ["SOLID", (r) => (r.title ?? "").includes("Solid")],
          ["éclat", (r) => (r.body ?? "").includes("ÉCLAT")],
          ["hopper", (r) => r.customerId === grace!.id],
          ["lovelace", (r) => r.customerId === ada!.id],
          ["red kettle", (r) => r.productId === kettle!.id],
          ["100%", () => false]
        ]
        for (const [term, predicate] of searches) {
          const expected = records.filter(predicate).map((r) => r.id).sort()
          const all = yield* walk(fx, { search: term, limit: "11" })
          assert.deepStrictEqual(all.map((r) => r.id).sort(), expected, `search ${term}`)
        }
        const both = yield* walk(fx, { search: "great", filter: JSON.stringify({ published: true }), limit: "3" })
        assert.deepStrictEqual(
          both.map((r) => r.id).sort(),
          records.filter((r) => (r.title ?? "").includes("great") && r.published).map((r) => r.id).sort()
        )
      }))

    it.effect("search finds exactly the reviews whose texts contain the term, on random texts and terms", () =>
      Effect.gen(function*() {
        // Texts from a small alphabet (both cases, folded and unfolded Latin-1, LIKE's wildcards and escape), so that
        // random terms often match, match in several fields at once, or almost match. A store that serves search
        // from an index (PostgreSQL's trigram indexes) must answer exactly as this substring rule does.
        const alphabet = fc.constantFrom(..."abcABC xyzÉé%_\\1".split(""))
        const text = fc.string({ unit: alphabet, minLength: 0, maxLength: 14 })
        const pick = <A>(arb: fc.Arbitrary<A>, n: number, seed: number) => fc.sample(arb, { numRuns: n, seed })
        const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Search" }))
        const as = asDashboard(org.id)
        const catalogs = yield* Catalog.Catalogs
        const products: Array<Catalog.Product> = []
        for (const [i, title] of pick(text.filter((t) => t.trim() !== ""), 4, 1).entries()) {
          products.push(yield* as(catalogs.createProduct({ slug: `p${i}`, title })))
        }
        const customers: Array<Catalog.Customer> = []
        for (const [i, [first, last]] of pick(fc.tuple(text, text), 4, 2).entries()) {
          customers.push(
            yield* as(catalogs.createCustomer({
              email: `c${i}${first.replace(/[^a-z]/g, "")}@example.com`,
              ...(first.trim() === "" ? {} : { firstName: first }),
              ...(last.trim() === "" ? {} : { lastName: last })
            }))
          )
        }
        const seeds: Array<SeedReview> = []
        for (const [i, [title, body]] of pick(fc.tuple(text, text), 60, 3).entries()) {
          seeds.push(
            yield* makeSeedReview(org.id, {
              productId: products[i % products.length]!.id,
              customerId: i % 7 === 6 ? null : customers[i % customers.length]!.id,
              fields: { createdAt: at(i * MINUTE), title: title === "" ? null : title, body }
            })
          )
        }
        yield* StoreTestKit.use((s) => s.insertReviews(seeds))
        const productOf = new Map(products.map((p) => [p.id as string, p]))
        const customerOf = new Map(customers.map((c) => [c.id as string, c]))
        const valuesOf = (r: Reviews.ReviewRecord) => {
          const c = r.customerId === null ? undefined : customerOf.get(r.customerId)
          return [r.title, r.body, c?.email, c?.firstName, c?.lastName, productOf.get(r.productId)?.title]
        }
        const fx = { as } as Fixture
        // Terms: pieces of the seeded texts (they match), and free strings of the same alphabet (they mostly do not).
        const pieces = seeds.flatMap((s) => [s.review.title ?? "", s.review.body ?? ""]).filter((t) =>
          t.trim().length >= 1
        )
        const terms = [
          ...pick(fc.tuple(fc.constantFrom(...pieces), fc.nat(), fc.nat()), 40, 4).map(([t, a, b]) =>
            t.slice(a % t.length, a % t.length + 1 + (b % 6))
          ),
          ...pick(text.filter((t) => t.trim() !== ""), 30, 5),
          "ABC",
          "éÉé",
          "%_\\",
          "xyz1"
        ].filter((t) => t.trim() !== "")
        for (const term of terms) {
          // The API trims a term (docs/DECISIONS.md §4) before it matches.
          const expected = seeds.map((s) => s.review).filter((r) => Kernel.matchesSearch(term.trim(), valuesOf(r))).map(
            (r) => r.id
          ).sort()
          const found = yield* walk(fx, { search: term, limit: "25" })
          assert.deepStrictEqual(found.map((r) => r.id).sort(), expected, `search ${JSON.stringify(term)}`)
        }
      }))

    it.effect("unknown fields, operators and wrong value types are InvalidRequest naming the path", () =>
      Effect.gen(function*() {
        const reviews = yield* Reviews.Reviews
        const fx = yield* makeFixture(3)
        for (
          const [filter, path] of [
            ["{\"nope\":1}", "filter.nope"],
            ["{\"rating\":{\"$regex\":\"1\"}}", "filter.rating.$regex"],
            ["{\"rating\":\"five\"}", "filter.rating"],
            ["{\"published\":{\"$gt\":true}}", "filter.published.$gt"],
            ["{\"product.id\":\"not-a-uuid\"}", "filter.product.id"],
            ["{\"customer.createdAt\":{\"$gte\":\"yesterday\"}}", "filter.customer.createdAt.$gte"],
            ["{\"$or\":[{\"rating\":1},{\"product.price\":2}]}", "filter.$or[1].product.price"],
            ["{\"metadata\":\"x\"}", "filter.metadata"],
            ["[1]", "filter"],
            ["{\"rating\":", "filter"]
          ] as const
        ) {
          const error = yield* Effect.flip(fx.as(reviews.list({ filter })))
          assert.strictEqual(error._tag, "InvalidRequest", filter)
          assert.include(issuesOf(error), path, filter)
        }
        for (
          const [params, path] of [
            [{ sort: "title" }, "sort"],
            [{ limit: "251" }, "limit"],
            [{ include: "customer,reviews" }, "include"],
            [{ search: "x".repeat(201) }, "search"]
          ] as const
        ) {
          const error = yield* Effect.flip(fx.as(reviews.list(params)))
          assert.deepStrictEqual(issuesOf(error), [path])
        }
      }))

    it.effect("include adds exactly the requested extras and changes nothing else", () =>
      Effect.gen(function*() {
        const reviews = yield* Reviews.Reviews
        const fx = yield* makeFixture()
        const all = Reviews.reviewIncludeNames.join(",")
        const plain = yield* fx.as(reviews.list({ limit: "250" }))
        const full = yield* fx.as(reviews.list({ limit: "250", include: all }))
        assert.deepStrictEqual(full.data.map(recordOf), [...plain.data])
        const product = new Map(fx.products.map((p) => [p.id as string, p]))
        const customer = new Map(fx.customers.map((c) => [c.id as string, c]))
        const seedOf = new Map(fx.seeds.map((s) => [s.review.id as string, s]))
        const records = fx.seeds.map((s) => s.review)
        const others = (field: "browserFingerprint" | "ipAddress", r: Reviews.ReviewRecord) =>
          r[field] === null ? 0 : records.filter((o) => o.id !== r.id && o[field] === r[field]).length
        for (const review of full.data) {
          const seed = seedOf.get(review.id)!
          assert.deepStrictEqual(review.product, product.get(review.productId))
          assert.deepStrictEqual(review.customer, review.customerId === null ? null : customer.get(review.customerId))
          assert.deepStrictEqual(review.response, seed.reply ?? null)
          assert.deepStrictEqual(review.files, seed.files ?? [])
          assert.deepStrictEqual(review.answers, seed.answers ?? [])
          assert.deepStrictEqual(
            review.importJob,
            seed.importJob === undefined ? null : { ...seed.importJob.job, row: seed.importJob.row }
          )
          // Other organizations' reviews share fp0 / 10.0.0.0 but never count.
          assert.deepStrictEqual(review.collisions, {
            browserFingerprint: others("browserFingerprint", review),
            ipAddress: others("ipAddress", review)
          })
        }
        const mug = full.data.find((r) => r.productId === fx.products[0]!.id)!.product!
        const mugReviews = records.filter((r) => r.productId === fx.products[0]!.id)
        const published = mugReviews.filter((r) => r.published)
        assert.strictEqual(mug.reviewCount, mugReviews.length)
        assert.strictEqual(mug.publishedReviewCount, published.length)
        assert.closeTo(mug.averageRating!, published.reduce((s, r) => s + r.rating, 0) / published.length, 1e-9)
        // One include at a time: only that key is added.
        for (const name of Reviews.reviewIncludeNames) {
          const page = yield* fx.as(reviews.list({ limit: "5", include: name }))
          for (const review of page.data) {
            const extras = Reviews.reviewIncludeNames.filter((n) => n in review)
            assert.deepStrictEqual(extras, [name])
          }
        }
        // get honours include the same way, and lists ignore blanks and repeats in include.
        const some = fx.seeds[3]!.review
        const got = yield* fx.as(reviews.get(some.id, { include: " files, response,files " }))
        assert.deepStrictEqual(
          Reviews.reviewIncludeNames.filter((n) => n in got),
          ["response", "files"] as Array<Reviews.ReviewInclude>
        )
        assert.deepStrictEqual(recordOf(got), some)
        assert.deepStrictEqual(yield* fx.as(reviews.get(some.id)), some)
        const bad = yield* Effect.flip(fx.as(reviews.get(some.id, { include: "everything" })))
        assert.deepStrictEqual(issuesOf(bad), ["include"])
      }))

    it.effect("another organization's review, and a missing one, are NotFound; reading needs reviews:read", () =>
      Effect.gen(function*() {
        const reviews = yield* Reviews.Reviews
        const fx = yield* makeFixture(3)
        const foreign = yield* Effect.flip(fx.as(reviews.get(fx.otherReviewId)))
        assert.strictEqual(foreign._tag, "NotFound")
        const missing = yield* Effect.flip(
          fx.as(reviews.get("0190a000-0000-7000-8000-00000000dead" as Kernel.ReviewId))
        )
        assert.strictEqual(missing._tag, "NotFound")
        assert.deepStrictEqual(
          foreign.message.replace(fx.otherReviewId, "ID"),
          missing.message.replace("0190a000-0000-7000-8000-00000000dead", "ID")
        )
        const own = yield* asDashboard(fx.otherOrganizationId)(reviews.get(fx.otherReviewId))
        assert.strictEqual(own.id, fx.otherReviewId)
        const mine = yield* fx.as(reviews.list({ filter: JSON.stringify({ id: fx.otherReviewId }) }))
        assert.deepStrictEqual(mine.data, [])
        const writer = asKey(fx.organizationId, ["reviews:write", "products:read"])
        assert.strictEqual((yield* Effect.flip(writer(reviews.list({}))))._tag, "Forbidden")
        assert.strictEqual((yield* Effect.flip(writer(reviews.get(fx.seeds[0]!.review.id))))._tag, "Forbidden")
        // The permission is checked before the parameters.
        assert.strictEqual((yield* Effect.flip(writer(reviews.list({ limit: "0" }))))._tag, "Forbidden")
        const reader = asKey(fx.organizationId, ["reviews:read"])
        assert.strictEqual((yield* reader(reviews.list({}))).data.length, 3)
      }))
  })
