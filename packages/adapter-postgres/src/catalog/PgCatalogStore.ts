/**
 * Sites, products and customers over PostgreSQL.
 *
 * Bulk inserts are set-based: one query finds the stored records that clash with the batch, one
 * `INSERT … SELECT FROM jsonb_to_recordset($json)` inserts the rest (a single parameter, so 10,000 rows do not
 * meet the protocol's 65,535-parameter limit). `ON CONFLICT DO NOTHING` covers a concurrent insert of the same
 * value between the two statements: such a row is reported as a clash instead of aborting the transaction.
 */
import { Catalog, Kernel } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { columnsFrom, compileListQuery, type ListSqlMapping } from "../kernel/FilterSql.ts"
import { CUSTOMER_COLUMNS, CUSTOMER_RECORDSET, toCustomer, toProduct, toSite } from "./CatalogRows.ts"
import { orDie } from "../kernel/SqlErrors.ts"

type Row = Record<string, any>

const createdAt = { sql: "t.created_at", notNull: true } as const
const id = { sql: "t.id", notNull: true } as const

const siteMapping: ListSqlMapping = {
  columns: columnsFrom({ id, name: "t.name", domain: "t.domain", createdAt }),
  id: "t.id",
  search: ["t.name", "t.domain"]
}

const productMapping: ListSqlMapping = {
  columns: columnsFrom({
    id,
    slug: "t.slug",
    title: "t.title",
    externalId: "t.external_id",
    createdAt,
    metadata: "t.metadata"
  }),
  id: "t.id",
  search: ["t.title", "t.slug"]
}

const customerMapping: ListSqlMapping = {
  columns: columnsFrom({
    id,
    email: "t.email",
    firstName: "t.first_name",
    lastName: "t.last_name",
    emailOptOut: "t.email_opt_out",
    emailOptOutSource: "t.email_opt_out_source",
    createdAt,
    metadata: "t.metadata"
  }),
  id: "t.id",
  search: ["t.email", "t.first_name", "t.last_name"]
}

const productColumns =
  `id, slug, title, description, image_url, url, external_id, metadata, notes, created_at, updated_at`
const productRecordset = `id uuid, slug text, title text, description text, image_url text, url text, external_id text,
  metadata jsonb, notes text, created_at timestamptz, updated_at timestamptz`

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const snakeKeys = (record: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [snake(k), v]))

/** One row: the organization's storefront content version, "0" before its first write (docs/DECISIONS.md §70). */
const VERSION_ROW = `SELECT coalesce((SELECT version::text FROM storefront_versions WHERE organization_id = $1),
  '0') AS storefront_version`

export const PgCatalogRepository = Layer.effect(
  Catalog.CatalogRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const list = <A>(
      table: string,
      mapping: ListSqlMapping,
      toRecord: (r: Row) => A,
      organizationId: string,
      request: Kernel.ListRequest
    ): Effect.Effect<Kernel.Page<A>> => {
      const q = compileListQuery(request, mapping, 1)
      const text = `SELECT t.* FROM ${table} t WHERE t.organization_id = $1 AND ${q.where}
      ORDER BY ${q.orderBy} LIMIT ${request.limit + 1}`
      return sql.unsafe<Row>(text, [organizationId, ...q.params]).pipe(
        Effect.map((rows) =>
          Kernel.toPage(rows.map(toRecord), request, (record) => ({
            value: Kernel.normalizeValue(request.sort.type, (record as Record<string, unknown>)[request.sort.field]),
            id: (record as unknown as { id: string }).id
          }))
        ),
        orDie
      )
    }

    /**
     * `list` with the storefront content version read in the same statement (docs/DECISIONS.md §78): joined to one row
     * of the version, so a listing that finds nothing still answers it.
     */
    const listWithVersion = <A>(
      table: string,
      mapping: ListSqlMapping,
      toRecord: (r: Row) => A,
      organizationId: string,
      request: Kernel.ListRequest
    ): Effect.Effect<Catalog.WithStorefrontVersion<Kernel.Page<A>>> => {
      const q = compileListQuery(request, mapping, 1)
      const text = `SELECT t.*, v.storefront_version FROM (${VERSION_ROW}) v LEFT JOIN LATERAL (
        SELECT t.* FROM ${table} t WHERE t.organization_id = $1 AND ${q.where} ORDER BY ${q.orderBy}
        LIMIT ${request.limit + 1}) t ON true ORDER BY ${q.orderBy}`
      return sql.unsafe<Row>(text, [organizationId, ...q.params]).pipe(
        Effect.map((rows) => ({
          storefrontVersion: String(rows[0]!.storefrontVersion),
          value: Kernel.toPage(rows.filter((r) => r.id !== null).map(toRecord), request, (record) => ({
            value: Kernel.normalizeValue(request.sort.type, (record as Record<string, unknown>)[request.sort.field]),
            id: (record as unknown as { id: string }).id
          }))
        })),
        orDie
      )
    }

    const findOne = <A>(table: string, toRecord: (r: Row) => A, organizationId: string, recordId: string) =>
      sql<Row>`SELECT * FROM ${sql(table)} WHERE organization_id = ${organizationId} AND id = ${recordId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)),
        orDie
      )

    /**
     * The set-based insert shared by products and customers: `taken` finds stored unique values that clash with the
     * batch; the remaining rows go in with one statement.
     */
    const insertBatch = <A extends { readonly id: string }>(options: {
      readonly table: string
      readonly columns: string
      readonly recordset: string
      readonly organizationId: string
      readonly records: ReadonlyArray<A>
      readonly uniques: (record: A) => ReadonlyArray<readonly [Catalog.UniqueField, string | null]>
      readonly taken: Effect.Effect<ReadonlySet<string>, unknown>
    }) =>
      Effect.gen(function*() {
        if (options.records.length === 0) return [] as ReadonlyArray<Catalog.InsertOutcome>
        const taken = yield* options.taken
        const outcomes: Array<Catalog.InsertOutcome | undefined> = options.records.map((record) => {
          const clash = options.uniques(record).find(([field, value]) =>
            value !== null && taken.has(`${field}:${value}`)
          )
          return clash === undefined ? undefined : { _tag: "Clash", field: clash[0] }
        })
        const fresh = options.records.filter((_, i) => outcomes[i] === undefined)
        const inserted = new Set<string>()
        if (fresh.length > 0) {
          const rows = yield* sql.unsafe<{ id: string }>(
            `INSERT INTO ${options.table} (organization_id, ${options.columns})
           SELECT $1, ${options.columns} FROM jsonb_to_recordset($2::jsonb) AS x(${options.recordset})
           ON CONFLICT DO NOTHING RETURNING id`,
            [options.organizationId, JSON.stringify(fresh.map(snakeKeys))]
          )
          for (const r of rows) inserted.add(r.id)
        }
        return options.records.map((record, i): Catalog.InsertOutcome => {
          const known = outcomes[i]
          if (known !== undefined) return known
          if (inserted.has(record.id)) return { _tag: "Inserted" }
          // Taken by a concurrent transaction between our check and our insert.
          return { _tag: "Clash", field: options.uniques(record)[0]![0] }
        })
      }).pipe(orDie)

    const jsonList = (values: ReadonlyArray<string | null>) => JSON.stringify(values.filter((v) => v !== null))

    const insertProducts = (organizationId: string, products: ReadonlyArray<Catalog.Product>) =>
      insertBatch({
        table: "products",
        columns: productColumns,
        recordset: productRecordset,
        organizationId,
        records: products.map((
          { reviewCount: _a, publishedReviewCount: _b, averageRating: _c, ratingHistogram: _d, ...p }
        ) => p),
        uniques: (p) => [["slug", p.slug], ["externalId", p.externalId]],
        taken: sql<{ slug: string; externalId: string | null }>`SELECT slug, external_id FROM products
          WHERE organization_id = ${organizationId}
            AND (slug IN (SELECT jsonb_array_elements_text(${jsonList(products.map((p) => p.slug))}::jsonb))
              OR external_id IN (SELECT jsonb_array_elements_text(${
          jsonList(products.map((p) => p.externalId))
        }::jsonb)))`
          .pipe(Effect.map((rows) => {
            const set = new Set<string>()
            for (const r of rows) {
              set.add(`slug:${r.slug}`)
              if (r.externalId !== null) set.add(`externalId:${r.externalId}`)
            }
            return set
          }))
      })

    const insertCustomers = (organizationId: string, customers: ReadonlyArray<Catalog.Customer>) =>
      insertBatch({
        table: "customers",
        columns: CUSTOMER_COLUMNS,
        recordset: CUSTOMER_RECORDSET,
        organizationId,
        records: customers,
        uniques: (c) => [["email", c.email]],
        taken: sql<{ email: string }>`SELECT email FROM customers WHERE organization_id = ${organizationId}
          AND email IN (SELECT jsonb_array_elements_text(${jsonList(customers.map((c) => c.email))}::jsonb))`
          .pipe(Effect.map((rows) => new Set(rows.map((r) => `email:${r.email}`))))
      })

    const updateProduct = (
      organizationId: string,
      p: Catalog.Product
    ): Effect.Effect<Catalog.UpdateOutcome<Catalog.Product>> =>
      Effect.gen(function*() {
        const clashes = yield* sql<{ slug: string; externalId: string | null }>`SELECT slug, external_id FROM products
          WHERE organization_id = ${organizationId} AND id <> ${p.id}
            AND (slug = ${p.slug} OR external_id = ${p.externalId}) LIMIT 1`
        const clash = clashes[0]
        if (clash !== undefined) {
          return { _tag: "Clash", field: clash.slug === p.slug ? "slug" : "externalId" } as const
        }
        const rows = yield* sql<Row>`UPDATE products SET slug = ${p.slug}, title = ${p.title},
          description = ${p.description}, image_url = ${p.imageUrl}, url = ${p.url}, external_id = ${p.externalId},
          metadata = ${JSON.stringify(p.metadata)}::jsonb, notes = ${p.notes}, updated_at = ${p.updatedAt}
          WHERE organization_id = ${organizationId} AND id = ${p.id} RETURNING *`
        const row = rows[0]
        return row === undefined ? { _tag: "NotFound" } as const : { _tag: "Updated", record: toProduct(row) } as const
      }).pipe(
        Effect.catchReason("SqlError", "UniqueViolation", (reason) =>
          Effect.succeed(
            {
              _tag: "Clash",
              field: reason.constraint.includes("external_id") ? "externalId" : "slug"
            } as const
          )),
        orDie
      )

    const deleteProduct = (
      organizationId: string,
      productId: string
    ): Effect.Effect<Catalog.DeleteOutcome<Catalog.Product>> =>
      Effect.gen(function*() {
        const [referenced] = yield* sql<{ referenced: boolean }>`SELECT EXISTS (SELECT 1 FROM reviews
          WHERE organization_id = ${organizationId} AND product_id = ${productId}) AS referenced`
        if (referenced?.referenced === true) return { _tag: "Referenced" } as const
        const rows = yield* sql<
          Row
        >`DELETE FROM products WHERE organization_id = ${organizationId} AND id = ${productId}
          RETURNING *`
        const row = rows[0]
        return row === undefined ? { _tag: "NotFound" } as const : { _tag: "Deleted", record: toProduct(row) } as const
      }).pipe(
        // Another table (or a review inserted since the check) still refers to the product.
        Effect.catchReason("SqlError", "ConstraintError", () => Effect.succeed({ _tag: "Referenced" } as const)),
        orDie
      )

    return Catalog.CatalogRepository.of({
      // No row yet: the organization's storefront content was never written (docs/DECISIONS.md §70).
      storefrontVersion: (organizationId) =>
        sql<{ version: string }>`SELECT version FROM storefront_versions WHERE organization_id = ${organizationId}`
          .pipe(Effect.map((rows) => rows[0] === undefined ? "0" : String(rows[0].version)), orDie),
      insertSite: (organizationId, s) =>
        sql`INSERT INTO sites (organization_id, id, name, domain, created_at, updated_at)
          VALUES (${organizationId}, ${s.id}, ${s.name}, ${s.domain}, ${s.createdAt}, ${s.updatedAt})`.pipe(
          Effect.asVoid,
          orDie
        ),
      findSite: (organizationId, siteId) => findOne("sites", toSite, organizationId, siteId),
      listSites: (organizationId, request) => list("sites", siteMapping, toSite, organizationId, request),
      insertProducts,
      findProduct: (organizationId, productId) => findOne("products", toProduct, organizationId, productId),
      findProducts: (organizationId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : sql<Row>`SELECT * FROM products WHERE organization_id = ${organizationId} AND id IN ${
            sql.in([...new Set(ids)])
          }`
            .pipe(Effect.map((rows) => rows.map(toProduct)), orDie),
      listProducts: (organizationId, request) => list("products", productMapping, toProduct, organizationId, request),
      withStorefrontVersion: {
        findProduct: (organizationId, productId) =>
          sql.unsafe<Row>(
            `SELECT t.*, v.storefront_version FROM (${VERSION_ROW}) v
            LEFT JOIN products t ON t.organization_id = $1 AND t.id = $2`,
            [organizationId, productId]
          ).pipe(
            Effect.map((rows) => ({
              storefrontVersion: String(rows[0]!.storefrontVersion),
              value: rows[0]!.id === null ? Option.none() : Option.some(toProduct(rows[0]!))
            })),
            orDie
          ),
        listProducts: (organizationId, request) =>
          listWithVersion("products", productMapping, toProduct, organizationId, request)
      },
      updateProduct,
      deleteProduct,
      insertCustomers,
      findCustomer: (organizationId, customerId) => findOne("customers", toCustomer, organizationId, customerId),
      // One text whatever the number of ids (an array parameter), so the statement is prepared once.
      findCustomers: (organizationId, ids) =>
        ids.length === 0 ? Effect.succeed([]) : sql.unsafe<Row>(
          `SELECT * FROM customers WHERE organization_id = $1 AND id = ANY($2::uuid[])`,
          [organizationId, `{${[...new Set(ids)].join(",")}}`]
        ).pipe(Effect.map((rows) => rows.map(toCustomer)), orDie),
      listCustomers: (organizationId, request) =>
        list("customers", customerMapping, toCustomer, organizationId, request)
    })
  })
)
