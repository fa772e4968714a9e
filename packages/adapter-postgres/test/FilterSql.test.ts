/**
 * The SQL compilation of filters, search and keyset pagination must select exactly what the in-memory evaluator
 * selects. Random records (nulls, metadata, missing and dangling related records, awkward strings) go into an
 * embedded PGlite database and into memory; random valid filter documents, search terms and sorts are answered
 * by both, and the ids must agree.
 */
import { PGlite } from "@electric-sql/pglite"
import { Result } from "effect"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Kernel, Reviews } from "@feedback/core"
import { testIssuer } from "@feedback/testing"
import {
  columnsFrom,
  compileFilter,
  compileListQuery,
  compileSearch,
  type ListSqlMapping
} from "../src/kernel/FilterSql.ts"

// ---------------------------------------------------------------------------------------------------------------
// Records

interface Product {
  readonly id: string
  readonly slug: string
  readonly title: string
  readonly metadata: Readonly<Record<string, string>>
  readonly createdAt: string
}

interface Customer {
  readonly id: string
  readonly email: string
  readonly firstName: string | null
  readonly lastName: string | null
  readonly metadata: Readonly<Record<string, string>>
  readonly emailOptOut: boolean
  readonly emailOptOutSource: string | null
  readonly createdAt: string
}

interface Review {
  readonly id: string
  readonly rating: number | null
  readonly published: boolean
  readonly flagged: boolean
  readonly moderatedAt: string | null
  readonly surveyId: string | null
  readonly ipAddress: string | null
  readonly browserFingerprint: string | null
  readonly metadata: Readonly<Record<string, string>>
  readonly createdAt: string
  readonly updatedAt: string
  readonly title: string | null
  readonly body: string | null
  readonly productId: string | null
  readonly customerId: string | null
}

interface Dataset {
  readonly products: ReadonlyArray<Product>
  readonly customers: ReadonlyArray<Customer>
  readonly reviews: ReadonlyArray<Review>
}

/** Strings chosen to trip collation, case folding, LIKE escaping and quoting. */
const strings = [
  "",
  "a",
  "A",
  "b",
  "mug",
  "Mug",
  "Great MUG!",
  "été",
  "ÉTÉ",
  "Zoë",
  "ZOË",
  "zebra",
  "ß",
  "ÿ",
  "50% off",
  "a_b",
  "axb",
  "back\\slash",
  "'; DROP TABLE reviews; --",
  "😀",
  "\uFFFD",
  "\uE000",
  "Ω",
  "ω"
] as const

const instants = [
  "2025-12-31T23:59:59.999Z",
  "2026-01-01T00:00:00.000Z",
  "2026-01-01T00:00:00.001Z",
  "2026-06-15T12:30:00.000Z",
  "2027-03-01T08:00:00.500Z"
] as const

const metadataKeys = ["color", "size", "constructor", "__proto__", "a.b", "x') OR 1=1 --"] as const
const SURVEY_IDS = ["11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"] as const
const DANGLING_ID = "99999999-9999-4999-8999-999999999999"

const arbId = fc.uuid({ version: 4 })
/** Common values first, so that equality and $in often hit. */
const arbString = fc.oneof(
  { arbitrary: fc.constantFrom("a", "Mug", "été", "b"), weight: 2 },
  { arbitrary: fc.constantFrom(...strings), weight: 3 }
)
const arbInstant = fc.constantFrom(...instants)
const arbMetadata = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...metadataKeys), arbString), { selector: ([k]) => k, maxLength: 3 })
  .map((entries) => Object.fromEntries(entries) as Record<string, string>)

const arbDataset: fc.Arbitrary<Dataset> = fc
  .record({
    products: fc.uniqueArray(
      fc.record({ id: arbId, slug: arbString, title: arbString, metadata: arbMetadata, createdAt: arbInstant }),
      { selector: (p) => p.id, maxLength: 4 }
    ),
    customers: fc.uniqueArray(
      fc.record({
        id: arbId,
        email: arbString,
        firstName: fc.option(arbString, { nil: null }),
        lastName: fc.option(arbString, { nil: null }),
        metadata: arbMetadata,
        emailOptOut: fc.boolean(),
        emailOptOutSource: fc.option(arbString, { nil: null }),
        createdAt: arbInstant
      }),
      { selector: (c) => c.id, maxLength: 4 }
    ),
    reviewIds: fc.uniqueArray(arbId, { minLength: 8, maxLength: 30 })
  })
  .chain(({ products, customers, reviewIds }) => {
    const productRef = fc.option(fc.constantFrom(DANGLING_ID, ...products.map((p) => p.id)), { nil: null })
    const customerRef = fc.option(fc.constantFrom(DANGLING_ID, ...customers.map((c) => c.id)), { nil: null })
    const review = (id: string): fc.Arbitrary<Review> =>
      fc.record({
        id: fc.constant(id),
        rating: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null, freq: 6 }),
        published: fc.boolean(),
        flagged: fc.boolean(),
        moderatedAt: fc.option(arbInstant, { nil: null }),
        surveyId: fc.option(fc.constantFrom(...SURVEY_IDS), { nil: null }),
        ipAddress: fc.option(arbString, { nil: null }),
        browserFingerprint: fc.option(arbString, { nil: null }),
        metadata: arbMetadata,
        createdAt: arbInstant,
        updatedAt: arbInstant,
        title: fc.option(arbString, { nil: null }),
        body: fc.option(arbString, { nil: null }),
        productId: productRef,
        customerId: customerRef
      })
    return fc.tuple(...reviewIds.map(review)).map((reviews) => ({ products, customers, reviews }))
  })

/** The memory side's field accessor, the contract of `FieldAccessor`: a missing related record reads as null. */
const accessorFor = (data: Dataset) => {
  const products = new Map(data.products.map((p) => [p.id, p]))
  const customers = new Map(data.customers.map((c) => [c.id, c]))
  return (review: Review, path: string): unknown => {
    const [head, rest] = path.split(/\.(.*)/s) as [string, string | undefined]
    if (rest !== undefined && head === "product") {
      const product = review.productId === null ? undefined : products.get(review.productId)
      return product === undefined ? null : (product as unknown as Record<string, unknown>)[rest]
    }
    if (rest !== undefined && head === "customer") {
      const customer = review.customerId === null ? undefined : customers.get(review.customerId)
      return customer === undefined ? null : (customer as unknown as Record<string, unknown>)[rest]
    }
    return (review as unknown as Record<string, unknown>)[path]
  }
}

const searchValuesFor = (data: Dataset) => {
  const get = accessorFor(data)
  return (r: Review): ReadonlyArray<string | null | undefined> => [
    r.title,
    r.body,
    get(r, "customer.email") as string | null,
    get(r, "customer.firstName") as string | null,
    get(r, "customer.lastName") as string | null,
    get(r, "product.title") as string | null
  ]
}

// ---------------------------------------------------------------------------------------------------------------
// Database

const mapping: ListSqlMapping = {
  columns: columnsFrom({
    id: "r.id",
    rating: "r.rating",
    published: "r.published",
    flagged: "r.flagged",
    moderatedAt: "r.moderated_at",
    surveyId: "r.survey_id",
    ipAddress: "r.ip_address",
    browserFingerprint: "r.browser_fingerprint",
    metadata: "r.metadata",
    createdAt: "r.created_at",
    updatedAt: "r.updated_at",
    "product.id": "p.id",
    "product.slug": "p.slug",
    "product.title": "p.title",
    "product.metadata": "p.metadata",
    "product.createdAt": "p.created_at",
    "customer.id": "c.id",
    "customer.email": "c.email",
    "customer.firstName": "c.first_name",
    "customer.lastName": "c.last_name",
    "customer.metadata": "c.metadata",
    "customer.emailOptOut": "c.email_opt_out",
    "customer.emailOptOutSource": "c.email_opt_out_source",
    "customer.createdAt": "c.created_at"
  }),
  id: "r.id",
  search: ["r.title", "r.body", "c.email", "c.first_name", "c.last_name", "p.title"]
}

const ORG = "00000000-0000-4000-8000-0000000000aa"
const OTHER_ORG = "00000000-0000-4000-8000-0000000000bb"

/** $1 is the organization, as in a real store; the compiled fragments are numbered after it. */
const FROM = `FROM reviews r
  LEFT JOIN products p ON p.id = r.product_id
  LEFT JOIN customers c ON c.id = r.customer_id
  WHERE r.organization_id = $1`

let db: PGlite

beforeAll(async () => {
  db = await PGlite.create()
  // PGlite's database collation is "C", under which a forgotten COLLATE "C" would go unnoticed; the text columns
  // use a linguistic collation (ICU root: 'a' < 'B' < 'é' < 'f'), as a production database may have.
  await db.exec(`
    CREATE TABLE products (id uuid PRIMARY KEY, slug text COLLATE "unicode" NOT NULL, title text COLLATE "unicode" NOT NULL,
      metadata jsonb NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE customers (id uuid PRIMARY KEY, email text COLLATE "unicode" NOT NULL, first_name text COLLATE "unicode",
      last_name text COLLATE "unicode", metadata jsonb NOT NULL, email_opt_out boolean NOT NULL,
      email_opt_out_source text COLLATE "unicode", created_at timestamptz NOT NULL);
    CREATE TABLE reviews (id uuid PRIMARY KEY, organization_id uuid NOT NULL, rating integer, published boolean NOT NULL,
      flagged boolean NOT NULL, moderated_at timestamptz, survey_id uuid, ip_address text COLLATE "unicode",
      browser_fingerprint text COLLATE "unicode", metadata jsonb NOT NULL, created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL, title text COLLATE "unicode", body text COLLATE "unicode", product_id uuid, customer_id uuid);
  `)
})

afterAll(async () => {
  await db.close()
})

const snake = (record: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]))

const load = async (data: Dataset): Promise<void> => {
  await db.exec("TRUNCATE products, customers, reviews")
  const insert = (table: string, rows: ReadonlyArray<object>) =>
    db.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)`, [
      JSON.stringify(rows.map(snake))
    ])
  await insert("products", data.products)
  await insert("customers", data.customers)
  // Each review is also stored for another organization with another id: the `$1` condition must keep it out.
  await insert("reviews", [
    ...data.reviews.map((r) => ({ ...r, organizationId: ORG })),
    ...data.reviews.map((r, i) => ({
      ...r,
      id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      organizationId: OTHER_ORG
    }))
  ])
}

const sqlIds = async (where: { text: string; params: ReadonlyArray<unknown> }): Promise<Array<string>> => {
  const result = await db.query<{ id: string }>(`SELECT r.id ${FROM} AND ${where.text}`, [ORG, ...where.params])
  return result.rows.map((row) => row.id).sort()
}

// ---------------------------------------------------------------------------------------------------------------
// Filters

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const uuidPool = (data: Dataset): ReadonlyArray<string> => [
  DANGLING_ID,
  ...SURVEY_IDS,
  ...data.reviews.map((r) => r.id),
  ...data.products.map((p) => p.id),
  ...data.customers.map((c) => c.id)
]

/** Instants also written with an offset, and numbers between and beyond the stored ratings. */
const arbValue = (type: string, data: Dataset): fc.Arbitrary<Json> => {
  switch (type) {
    case "uuid":
      return fc.constantFrom(...uuidPool(data)).chain((u) => fc.constantFrom(u, u.toUpperCase()))
    case "boolean":
      return fc.boolean()
    case "number":
      return fc.constantFrom(-1, 0, 1, 2, 2.5, 3, 4, 4.999, 5, 6)
    case "timestamp":
      return fc.constantFrom(...instants).chain((t) =>
        fc.constantFrom(t, new Date(Date.parse(t) + 2 * 3_600_000).toISOString().replace("Z", "+02:00"))
      )
    default:
      return arbString
  }
}

const catalogFields = [...Reviews.reviewFilterCatalog.fields.entries()]
/** Every filterable path; the review's own fields weigh most, since related and metadata fields are often null. */
const arbFieldPath: fc.Arbitrary<readonly [string, string]> = fc.oneof(
  { arbitrary: fc.constantFrom(...catalogFields.filter(([path]) => !path.includes("."))), weight: 3 },
  { arbitrary: fc.constantFrom(...catalogFields.filter(([path]) => path.includes("."))), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      ...Reviews.reviewFilterCatalog.metadataPrefixes.flatMap((prefix) =>
        metadataKeys.map((key) => [`${prefix}.${key}`, "string"] as const)
      )
    ),
    weight: 1
  }
)

const arbCondition = (type: string, data: Dataset): fc.Arbitrary<Json> => {
  const value = arbValue(type, data)
  const ordering = type === "number" || type === "timestamp" || type === "string"
  const operators: Array<fc.Arbitrary<readonly [string, Json]>> = [
    value.map((v) => ["$eq", v] as const),
    value.map((v) => ["$ne", v] as const),
    fc.array(value, { maxLength: 4 }).map((vs) => ["$in", vs] as const),
    fc.array(value, { maxLength: 4 }).map((vs) => ["$nin", vs] as const),
    fc.boolean().map((b) => ["$exists", b] as const),
    fc.constantFrom(["$eq", null] as const, ["$ne", null] as const)
  ]
  if (ordering) {
    for (const op of ["$gt", "$gte", "$lt", "$lte"]) operators.push(value.map((v) => [op, v] as const))
  }
  return fc.oneof(
    { arbitrary: value, weight: 3 },
    { arbitrary: fc.constant(null), weight: 1 },
    {
      arbitrary: fc.uniqueArray(fc.oneof(...operators), { minLength: 1, maxLength: 2, selector: ([op]) => op })
        .map((entries) => Object.fromEntries(entries)),
      weight: 6
    }
  )
}

const arbFilterDocument = (data: Dataset): fc.Arbitrary<Json> => {
  const leafEntry = arbFieldPath.chain(([path, type]) => arbCondition(type, data).map((c) => [path, c] as const))
  const { doc } = fc.letrec<{ doc: Json }>((tie) => ({
    doc: fc.oneof(
      { maxDepth: 3, depthIdentifier: "filter" },
      {
        arbitrary: fc.array(leafEntry, { minLength: 1, maxLength: 2 }).map((entries) => Object.fromEntries(entries)),
        weight: 4
      },
      { arbitrary: fc.record({ $and: fc.array(tie("doc"), { minLength: 1, maxLength: 3 }) }), weight: 1 },
      { arbitrary: fc.record({ $or: fc.array(tie("doc"), { minLength: 1, maxLength: 3 }) }), weight: 2 },
      {
        arbitrary: fc.tuple(leafEntry, fc.array(tie("doc"), { minLength: 1, maxLength: 3 })).map((
          [[path, c], members]
        ) => ({ [path]: c, $or: members })),
        weight: 1
      }
    )
  }))
  return doc
}

const arbSearch = (data: Dataset): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom("mug", "MUG", "été", "ét", "ZOË", "zo", "%", "_", "\\", "a_b", "50%", "'", "😀", "ß", "Ω", "b"),
    // a piece of a stored value, with its case changed
    fc.constantFrom(...data.reviews.flatMap((r) => [r.title ?? "", r.body ?? ""]).filter((s) => s !== ""), "x")
      .chain((s) =>
        fc.tuple(fc.nat(s.length), fc.nat(s.length), fc.boolean()).map(([a, b, upper]) => {
          const piece = [...s].slice(Math.min(a, b), Math.max(a, b) + 1).join("")
          return upper ? piece.toUpperCase() : piece.toLowerCase()
        })
      )
  )

// ---------------------------------------------------------------------------------------------------------------

describe("compiled filters, search and keyset agree with the memory evaluator", () => {
  it("selects the same records for random filters", async () => {
    let checked = 0
    let discriminating = 0
    await fc.assert(
      fc.asyncProperty(
        arbDataset.chain((data) =>
          fc.tuple(fc.constant(data), fc.array(arbFilterDocument(data), { minLength: 10, maxLength: 10 }))
        ),
        async ([data, documents]) => {
          await load(data)
          const get = accessorFor(data)
          for (const document of documents) {
            const parsed = Kernel.parseFilter(JSON.stringify(document), Reviews.reviewFilterCatalog)
            if (Result.isFailure(parsed)) {
              // only the clause limit may refuse a generated document
              expect(parsed.failure.issues.map((i) => i.path)).toEqual(["filter"])
              continue
            }
            const ast = parsed.success
            const expected = data.reviews.filter((r) => Kernel.evaluateFilter(ast, (path) => get(r, path))).map((r) =>
              r.id
            )
              .sort()
            const compiled = compileFilter(ast, mapping.columns, 1)
            const actual = await sqlIds(compiled)
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(
                `filter ${JSON.stringify(document)}\nSQL ${compiled.text}\nmemory ${expected}\nsql ${actual}`
              )
            }
            checked++
            if (expected.length > 0 && expected.length < data.reviews.length) discriminating++
          }
        }
      ),
      { numRuns: 40, endOnFailure: true }
    )
    expect(checked).toBeGreaterThan(300)
    // the generated filters must mostly split the records, or agreeing on "all" / "none" would prove little
    expect(discriminating / checked).toBeGreaterThan(0.25)
  })

  it("selects the same records for random search terms", async () => {
    let discriminating = 0
    await fc.assert(
      fc.asyncProperty(
        arbDataset.chain((data) =>
          fc.tuple(fc.constant(data), fc.array(arbSearch(data), { minLength: 8, maxLength: 8 }))
        ),
        async ([data, terms]) => {
          await load(data)
          const values = searchValuesFor(data)
          for (const term of terms) {
            const expected = data.reviews.filter((r) => Kernel.matchesSearch(term, values(r))).map((r) => r.id).sort()
            const actual = await sqlIds(compileSearch(term, mapping.search, 1))
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(`search ${JSON.stringify(term)}\nmemory ${expected}\nsql ${actual}`)
            }
            if (expected.length > 0 && expected.length < data.reviews.length) discriminating++
          }
        }
      ),
      { numRuns: 30, endOnFailure: true }
    )
    expect(discriminating).toBeGreaterThan(60)
  })

  it("walks the same pages for random sorts, filters, searches and page sizes", async () => {
    let multiPage = 0
    const arbParams = (data: Dataset): fc.Arbitrary<Kernel.ListParams> =>
      fc.record({
        sort: fc.constantFrom(...Reviews.reviewListEndpoint.sorts),
        limit: fc.integer({ min: 1, max: 6 }).map(String),
        filter: fc.option(arbFilterDocument(data).map((d) => JSON.stringify(d)), { nil: undefined, freq: 2 }),
        search: fc.option(arbSearch(data), { nil: undefined, freq: 2 })
      })
    await fc.assert(
      fc.asyncProperty(
        arbDataset.chain((data) =>
          fc.tuple(fc.constant(data), fc.array(arbParams(data), { minLength: 3, maxLength: 3 }))
        ),
        async ([data, paramsList]) => {
          await load(data)
          const get = accessorFor(data)
          const access: Kernel.MemoryListAccess<Review> = {
            get,
            id: (r) => r.id,
            searchValues: searchValuesFor(data)
          }
          for (const params of paramsList) {
            const first = Kernel.parseListRequest(params, Reviews.reviewListEndpoint, testIssuer())
            if (Result.isFailure(first)) continue // a generated filter over the clause limit
            const memoryPages = await walkPages(
              params,
              async (request) => Kernel.pageInMemory(data.reviews, request, access)
            )
            const sqlPages = await walkPages(params, async (request) => {
              const q = compileListQuery(request, mapping, 1)
              const sortColumn = mapping.columns(request.sort.field).sql
              const result = await db.query<{ id: string; sort_value: unknown }>(
                `SELECT r.id, ${sortColumn} AS sort_value ${FROM} AND ${q.where} ORDER BY ${q.orderBy} LIMIT ${
                  request.limit + 1
                }`,
                [ORG, ...q.params]
              )
              return Kernel.toPage(result.rows, request, (row): Kernel.CursorPosition => ({
                value: row.sort_value instanceof Date ? row.sort_value.toISOString() : row.sort_value as number | null,
                id: row.id
              }))
            })
            const all = Kernel.pageInMemory(data.reviews, { ...first.success, limit: 10_000 }, access).data.map((r) =>
              r.id
            )
            expect(sqlPages).toEqual(memoryPages)
            expect(sqlPages.flat()).toEqual(all)
            if (sqlPages.length > 2) multiPage++
          }
        }
      ),
      { numRuns: 25, endOnFailure: true }
    )
    expect(multiPage).toBeGreaterThan(15)
  })
})

/** Follows `nextCursor` from the first page to the last, as a client would; returns the ids of each page. */
const walkPages = async (
  params: Kernel.ListParams,
  page: (request: Kernel.ListRequest) => Promise<{ data: ReadonlyArray<{ id: string }>; nextCursor: string | null }>
): Promise<Array<Array<string>>> => {
  const pages: Array<Array<string>> = []
  let cursor: string | undefined
  for (let n = 0; n < 1_000; n++) {
    const request = Result.getOrThrow(
      Kernel.parseListRequest({ ...params, cursor }, Reviews.reviewListEndpoint, testIssuer())
    )
    const result = await page(request)
    pages.push(result.data.map((r) => r.id))
    if (result.nextCursor === null) return pages
    cursor = result.nextCursor
  }
  throw new Error("pagination did not end")
}

describe("compiled SQL", () => {
  it("orders every pair of test strings like the memory evaluator, above U+FFFF too", async () => {
    // One review per test string, in a text column (linguistic collation) and a metadata key (jsonb ->> text).
    const reviews = strings.map((s, i) => ({
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`,
      ipAddress: s,
      metadata: { k: s }
    }))
    await db.exec("TRUNCATE products, customers, reviews")
    await db.query(
      `INSERT INTO reviews (id, organization_id, published, flagged, metadata, created_at, updated_at, ip_address)
       SELECT x.id, $1, true, false, x.metadata, now(), now(), x.ip_address
       FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, ip_address text, metadata jsonb)`,
      [ORG, JSON.stringify(reviews.map(snake))]
    )
    for (const path of ["ipAddress", "metadata.k"]) {
      for (const op of ["$gt", "$gte", "$lt", "$lte", "$ne"]) {
        for (const s of strings) {
          const ast = Result.getOrThrow(
            Kernel.parseFilter(JSON.stringify({ [path]: { [op]: s } }), Reviews.reviewFilterCatalog)
          )
          const expected = reviews
            .filter((r) => Kernel.evaluateFilter(ast, (p) => p === "metadata" ? r.metadata : r.ipAddress))
            .map((r) => r.id)
            .sort()
          expect(await sqlIds(compileFilter(ast, mapping.columns, 1)), `${path} ${op} ${JSON.stringify(s)}`)
            .toEqual(expected)
        }
      }
    }
  })

  it("never splices values into the text", () => {
    const ast = Result.getOrThrow(Kernel.parseFilter(
      JSON.stringify({
        "product.title": { $in: ["'; DROP TABLE reviews; --", "a"] },
        "metadata.x') OR 1=1 --": { $gt: "\\'" },
        rating: { $gte: 4 },
        createdAt: { $lt: "2026-01-01T00:00:00+02:00" }
      }),
      Reviews.reviewFilterCatalog
    ))
    const compiled = compileFilter(ast, mapping.columns, 3)
    expect(compiled.text).not.toContain("DROP")
    expect(compiled.text).not.toContain("1=1")
    expect(compiled.text).not.toMatch(/'|2026/)
    expect(compiled.text).toContain("$4::text")
    expect(compiled.params).toEqual([
      "'; DROP TABLE reviews; --",
      "a",
      "x') OR 1=1 --",
      "\\'",
      4,
      "2025-12-31T22:00:00.000Z"
    ])
    expect(compiled.text).toBe(
      "((p.title) IN ($4::text, $5::text) AND (r.metadata ->> $6::text) COLLATE \"C\" > $7::text" +
        " AND (r.rating) >= $8::double precision AND (r.created_at) < $9::timestamptz)"
    )
  })

  it("compiles the empty filter and empty $in / $nin to constants", () => {
    const compile = (json: string) =>
      compileFilter(Result.getOrThrow(Kernel.parseFilter(json, Reviews.reviewFilterCatalog)), mapping.columns).text
    expect(compile("{}")).toBe("TRUE")
    expect(compile("{\"rating\":{\"$in\":[]}}")).toBe("FALSE")
    expect(compile("{\"rating\":{\"$nin\":[]}}")).toBe("TRUE")
    expect(compile("{\"rating\":{\"$ne\":3}}")).toBe("(r.rating) IS DISTINCT FROM $1::double precision")
  })
})
