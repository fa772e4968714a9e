/**
 * Which reviews a filter and search match, over PostgreSQL: the one mapping of the review fields (docs/DECISIONS.md
 * §4) to columns and related tables, used by the list (and so the export) and by bulk moderation alike.
 */
import { Kernel } from "@feedback/core"
import { relatedCustomerColumns, relatedProductColumns } from "../catalog/CatalogColumns.ts"
import {
  columnsFrom,
  compileFilter,
  compileSearch,
  type ListSqlMapping,
  type SqlFragment
} from "../kernel/FilterSql.ts"

const notNull = (sql: string) => ({ sql, notNull: true }) as const

/** A table a filter may read through `reviews r`, joined only for the fields it serves. */
interface RelatedTable {
  readonly join: string
  readonly fields: ReadonlyArray<string>
}

/**
 * The related tables of `reviews r`: `products p` and `customers c`, each for its own filter fields. `product.id`
 * and `customer.id` read the review's own keys, so they need no join.
 */
const reviewRelatedTables: ReadonlyArray<RelatedTable> = [
  {
    join: "LEFT JOIN products p ON p.organization_id = r.organization_id AND p.id = r.product_id",
    fields: Object.keys(relatedProductColumns)
  },
  {
    join: "LEFT JOIN customers c ON c.organization_id = r.organization_id AND c.id = r.customer_id",
    fields: Object.keys(relatedCustomerColumns)
  }
]

/** The columns of the review fields a filter and sort read over `reviews r` and `reviewRelatedTables`. */
export const reviewMatchMapping: ListSqlMapping = {
  columns: columnsFrom({
    id: notNull("r.id"),
    rating: notNull("r.rating"),
    published: notNull("r.published"),
    flagged: notNull("r.flagged"),
    moderatedAt: "r.moderated_at",
    surveyId: "r.survey_id",
    ipAddress: "r.ip_address",
    browserFingerprint: "r.browser_fingerprint",
    metadata: "r.metadata",
    createdAt: notNull("r.created_at"),
    updatedAt: notNull("r.updated_at"),
    "product.id": notNull("r.product_id"),
    "customer.id": "r.customer_id",
    ...relatedProductColumns,
    ...relatedCustomerColumns
  }),
  id: "r.id",
  // What `compileSearch` would search with the joins; the stores use `reviewSearchSql` instead (same answers).
  search: ["r.title", "r.body", "c.email", "c.first_name", "c.last_name", "p.title"]
}

/** The dotted paths (metadata: the prefix) a filter reads. */
const pathsOf = (ast: Kernel.FilterAst, out: Set<string> = new Set()): Set<string> => {
  switch (ast._tag) {
    case "And":
    case "Or":
      ast.clauses.forEach((c) => pathsOf(c, out))
      return out
    default:
      out.add(ast.field._tag === "MetadataKey" ? ast.field.prefix : Kernel.fieldRefPath(ast.field))
      return out
  }
}

/**
 * The FROM clause of the reviews a filter matches: a related table is joined only when the filter reads one of its
 * fields, so an unfiltered list or bulk moderation touches reviews alone (with `FOR UPDATE OF r` the planner cannot
 * drop an unused outer join itself). Search needs no join: `reviewSearchSql` reads related records in subqueries.
 */
export const reviewMatchFrom = (filter: Kernel.FilterAst): string => {
  const paths = pathsOf(filter)
  return ["reviews r", ...reviewRelatedTables.filter((t) => t.fields.some((f) => paths.has(f))).map((t) => t.join)]
    .join("\n  ")
}

/** The condition of the reviews `filter` and `search` match, over `reviewMatchFrom(filter)`, parameters from `offset + 1`. */
export const reviewMatchWhere = (filter: Kernel.FilterAst, search: string | undefined, offset: number): SqlFragment => {
  const f = compileFilter(filter, reviewMatchMapping.columns, offset)
  const s = reviewSearchSql(search, offset + f.params.length)
  return { text: `(${f.text}) AND ${s.text}`, params: [...f.params, ...s.params] }
}

/**
 * The search condition of docs/DECISIONS.md §4 over a review's title and body, its customer's email and names and its
 * product's title. The related records are searched in uncorrelated subqueries (`r.customer_id IN (SELECT …)`),
 * which PostgreSQL runs once per statement as hashed sub-plans, rather than through joins: the reviews can then
 * still be read in the order of a list index and the scan stops at the page's last match, where a join would
 * make the planner match every review and sort. Same answers as `compileSearch` over the joined columns (a
 * missing customer or product has no values, so it matches nothing in both forms).
 */
export const reviewSearchSql = (term: string | undefined, offset: number): SqlFragment => {
  if (term === undefined || term === "") return { text: "TRUE", params: [] }
  const own = compileSearch(term, ["r.title", "r.body"], offset)
  // A term the trigram indexes serve: the related records are found through them, with the pattern `own` binds
  // first (the same value); otherwise as `compileSearch` would search them.
  const related = indexedSearchTerm(term)
    ? {
      customer: indexedLike(["sc.email", "sc.first_name", "sc.last_name"], offset + 1),
      product: indexedLike(["sp.title"], offset + 1),
      params: []
    }
    : (() => {
      const customer = compileSearch(term, ["sc.email", "sc.first_name", "sc.last_name"], offset + own.params.length)
      const product = compileSearch(term, ["sp.title"], offset + own.params.length + customer.params.length)
      return { customer: customer.text, product: product.text, params: [...customer.params, ...product.params] }
    })()
  return {
    text: `(${own.text}
    OR r.customer_id IN (SELECT sc.id FROM customers sc WHERE sc.organization_id = $1 AND ${related.customer})
    OR r.product_id IN (SELECT sp.id FROM products sp WHERE sp.organization_id = $1 AND ${related.product}))`,
    params: [...own.params, ...related.params]
  }
}

/**
 * The search over `columns` in the form their trigram indexes serve (migration 92), with the pattern in parameter
 * `$index` (the one `compileSearch` adds first). Used for customers and products, whose hashed sub-plans would
 * otherwise read every customer and product of the organization for each search.
 */
const indexedLike = (columns: ReadonlyArray<string>, index: number): string =>
  `(${columns.map((c) => `search_fold(${c}) LIKE $${index} ESCAPE '\\'`).join(" OR ")})`

/**
 * Search terms the trigram indexes can serve (migration 92): `pg_trgm` draws its trigrams from runs of letters and
 * digits, so a term without three in a row would make the index return every row. Such terms keep the scan.
 */
export const indexedSearchTerm = (term: string | undefined): term is string =>
  term !== undefined && /[a-z0-9]{3}/.test(Kernel.foldCase(term))
