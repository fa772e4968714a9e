/**
 * Use-cases of the catalog records (DECISIONS §9): sites, products and customers.
 *
 * Events (spec: Events; the catalog has no `product.created` or `customer.created`):
 * - `site.created` when a site is created;
 * - `product.updated` when a product is created, imported or changed, `product.deleted` when it is deleted;
 * - `customer.updated` when a customer is created or imported.
 * Each is recorded in the unit of work of the change, with the record in the shape the API returns it.
 *
 * Uniqueness (per organization): product `slug`, product `externalId` (when set) and customer `email` (compared
 * lower-cased). A clash is a 409 on create and update, a skipped row on import (a 422 with `strict`).
 * A product that reviews (or other records) still refer to cannot be deleted: 409.
 */
import { Effect, Option, Result } from "effect"
import type { Customer, Product, Site } from "./Catalog.ts"
import { batchDuplicates, clashMessage, duplicateMessage, type ImportRow, importResult } from "./CatalogImport.ts"
import { customerListEndpoint, productListEndpoint, siteListEndpoint } from "./CatalogLists.ts"
import { CatalogRepository, type InsertOutcome, type UniqueField } from "./CatalogRepository.ts"
import type {
  CustomerCreate,
  CustomerImport,
  ImportResult,
  ProductCreate,
  ProductImport,
  ProductPatch,
  SiteCreate
} from "./CatalogRequests.ts"
import { requirePermission } from "./Caller.ts"
import { Conflict, ImportFailed, InvalidRequest, NotFound } from "./Errors.ts"
import { recordEvent, recordEvents } from "./EventOutbox.ts"
import { nextId } from "./IdGenerator.ts"
import type { CustomerId, OrganizationId, ProductId, SiteId } from "./Ids.ts"
import { listRequestFor, type ListParams } from "./ListQuery.ts"
import { normalize, now, type Timestamp } from "./Timestamp.ts"
import { transactional } from "./UnitOfWork.ts"

const orNotFound = <A>(resource: string, id: string) => (found: Option.Option<A>) =>
  Option.match(found, { onNone: () => Effect.fail(NotFound.of(resource, id)), onSome: Effect.succeed })

// ---------------------------------------------------------------------------------------------------------------
// Sites

export const createSite = (input: SiteCreate) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("settings:write")
    const repo = yield* CatalogRepository
    return yield* transactional(Effect.gen(function*() {
      const at = yield* now
      const site: Site = { id: yield* nextId<SiteId>(), name: input.name, domain: input.domain ?? null, createdAt: at, updatedAt: at }
      yield* repo.insertSite(organizationId, site)
      yield* recordEvent(organizationId, "site.created", site)
      return site
    }))
  })

export const listSites = (params: ListParams) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("settings:read")
    const request = yield* listRequestFor(params, siteListEndpoint, organizationId)
    return yield* (yield* CatalogRepository).listSites(organizationId, request)
  })

export const getSite = (id: SiteId) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("settings:read")
    return yield* (yield* CatalogRepository).findSite(organizationId, id).pipe(Effect.flatMap(orNotFound("site", id)))
  })

// ---------------------------------------------------------------------------------------------------------------
// Products

const newProduct = (input: ProductCreate, id: ProductId, at: Timestamp): Product => ({
  id,
  slug: input.slug,
  title: input.title,
  description: input.description ?? null,
  imageUrl: input.imageUrl ?? null,
  url: input.url ?? null,
  externalId: input.externalId ?? null,
  metadata: input.metadata ?? {},
  notes: input.notes ?? null,
  reviewCount: 0,
  publishedReviewCount: 0,
  averageRating: null,
  createdAt: at,
  updatedAt: at
})

const productUniques = (p: Product): ReadonlyArray<readonly [UniqueField, string | null]> => [
  ["slug", p.slug],
  ["externalId", p.externalId]
]

const productClash = (p: Product, field: UniqueField) =>
  clashMessage("product", field, field === "slug" ? p.slug : p.externalId ?? "")

const conflict = (message: string) => new Conflict({ message: `${message[0]!.toUpperCase()}${message.slice(1)}.` })

export const createProduct = (input: ProductCreate) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:write")
    const repo = yield* CatalogRepository
    return yield* transactional(Effect.gen(function*() {
      const product = newProduct(input, yield* nextId<ProductId>(), yield* now)
      const [outcome] = yield* repo.insertProducts(organizationId, [product])
      if (outcome?._tag === "Clash") {
        return yield* conflict(`${productClash(product, outcome.field)}; choose another ${outcome.field}`)
      }
      yield* recordEvent(organizationId, "product.updated", product)
      return product
    }))
  })

export const listProducts = (params: ListParams) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:read")
    const request = yield* listRequestFor(params, productListEndpoint, organizationId)
    return yield* (yield* CatalogRepository).listProducts(organizationId, request)
  })

export const getProduct = (id: ProductId) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:read")
    return yield* (yield* CatalogRepository).findProduct(organizationId, id).pipe(
      Effect.flatMap(orNotFound("product", id))
    )
  })

/** Applies a PATCH body: sent fields replace stored ones (`metadata` wholesale), `null` clears a nullable field. */
export const applyProductPatch = (product: Product, patch: ProductPatch, at: Timestamp): Product => ({
  ...product,
  ...patch,
  updatedAt: at
})

/** Whether any sent field differs from the stored value (metadata compared as a set of entries). */
export const patchChanges = (product: Product, patch: ProductPatch): boolean =>
  Object.entries(patch).some(([key, value]) => {
    const stored = (product as Record<string, unknown>)[key]
    if (key === "metadata") {
      const a = stored as Readonly<Record<string, string>>
      const b = value as Readonly<Record<string, string>>
      return Object.keys(a).length !== Object.keys(b).length || Object.entries(b).some(([k, v]) => !Object.hasOwn(a, k) || a[k] !== v)
    }
    return stored !== value
  })

export const updateProduct = (id: ProductId, patch: ProductPatch) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:write")
    const repo = yield* CatalogRepository
    return yield* transactional(Effect.gen(function*() {
      const current = yield* repo.findProduct(organizationId, id).pipe(Effect.flatMap(orNotFound("product", id)))
      // A PATCH that changes nothing writes nothing and fires no event.
      if (!patchChanges(current, patch)) return current
      const changed = applyProductPatch(current, patch, yield* now)
      const outcome = yield* repo.updateProduct(organizationId, changed)
      switch (outcome._tag) {
        case "NotFound":
          return yield* NotFound.of("product", id)
        case "Clash":
          return yield* conflict(`${productClash(changed, outcome.field)}; choose another ${outcome.field}`)
        case "Updated":
          yield* recordEvent(organizationId, "product.updated", outcome.record)
          return outcome.record
      }
    }))
  })

export const deleteProduct = (id: ProductId) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:write")
    const repo = yield* CatalogRepository
    return yield* transactional(Effect.gen(function*() {
      const outcome = yield* repo.deleteProduct(organizationId, id)
      switch (outcome._tag) {
        case "NotFound":
          return yield* NotFound.of("product", id)
        case "Referenced":
          return yield* conflict(
            "this product still has reviews or questions; delete them first (reviews keep their product for good)"
          )
        case "Deleted":
          yield* recordEvent(organizationId, "product.deleted", outcome.record)
          return outcome.record
      }
    }))
  })

// ---------------------------------------------------------------------------------------------------------------
// Imports

/**
 * The shared import procedure: build records, drop rows that repeat an earlier row's unique value, store the
 * rest in one set-based insert, record one event per imported record, answer by index. With `strict` any skipped
 * row fails the whole import (the unit of work rolls back, so nothing is imported).
 */
const runImport = <Row, A extends { readonly id: string }, R>(options: {
  readonly organizationId: OrganizationId
  readonly rows: ReadonlyArray<Row>
  readonly strict: boolean
  readonly build: (row: Row, at: Timestamp) => Effect.Effect<A, never, R>
  readonly uniques: (record: A) => ReadonlyArray<readonly [UniqueField, string | null]>
  readonly insert: (records: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<InsertOutcome>>
  readonly clash: (record: A, field: UniqueField) => string
  readonly event: string
}) =>
  transactional(Effect.gen(function*() {
    const at = yield* now
    const records: Array<A> = []
    for (const row of options.rows) records.push(yield* options.build(row, at))
    const verdicts = batchDuplicates(records, options.uniques)
    const attempted: Array<ImportRow<A>> = []
    const early: Array<{ index: number; message: string }> = []
    verdicts.forEach((v, index) => {
      if (v._tag === "Unique") attempted.push({ index, record: records[index]! })
      else early.push({ index, message: duplicateMessage(v.field, v.value, v.firstIndex) })
    })
    const failStrict = (skipped: ReadonlyArray<{ readonly index: number; readonly message: string }>) => {
      const first = skipped[0]
      return first === undefined ? Effect.void : Effect.fail(
        new ImportFailed({
          index: first.index,
          message: `Row ${first.index} cannot be imported: ${first.message}; nothing was imported.`
        })
      )
    }
    if (options.strict) yield* failStrict(early)
    const outcomes = yield* options.insert(attempted.map((r) => r.record))
    const result: ImportResult = importResult(attempted, outcomes, early, options.clash)
    if (options.strict) yield* failStrict(result.skipped)
    const importedIds = new Set(result.imported.map((r) => r.id))
    yield* recordEvents(
      options.organizationId,
      attempted.filter((r) => importedIds.has(r.record.id)).map((r) => ({ event: options.event, data: r.record }))
    )
    return result
  }))

export const importProducts = (body: ProductImport) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("products:write")
    const repo = yield* CatalogRepository
    return yield* runImport({
      organizationId,
      rows: body.data,
      strict: body.strict ?? false,
      build: (row: ProductCreate, at) => Effect.map(nextId<ProductId>(), (id) => newProduct(row, id, at)),
      uniques: productUniques,
      insert: (records) => repo.insertProducts(organizationId, records),
      clash: productClash,
      event: "product.updated"
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// Customers

const newCustomer = (input: CustomerCreate, id: CustomerId, at: Timestamp): Customer => {
  const optedOut = input.emailOptOut ?? false
  return {
    id,
    email: input.email.toLowerCase(),
    phone: input.phone ?? null,
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    country: input.country ?? null,
    birthday: input.birthday ?? null,
    metadata: input.metadata ?? {},
    notes: input.notes ?? null,
    emailOptOut: optedOut,
    emailOptOutAt: optedOut ? (input.emailOptOutAt == null ? at : normalize(input.emailOptOutAt)) : null,
    emailOptOutSource: input.emailOptOutSource ?? null,
    createdAt: at,
    updatedAt: at
  }
}

const customerUniques = (c: Customer): ReadonlyArray<readonly [UniqueField, string | null]> => [["email", c.email]]
const customerClash = (c: Customer, field: UniqueField) => clashMessage("customer", field, c.email)

/** `emailOptOutAt` only makes sense for a customer who opted out. */
const checkOptOut = (input: CustomerCreate, path: string): Result.Result<CustomerCreate, InvalidRequest> =>
  input.emailOptOutAt != null && input.emailOptOut !== true
    ? Result.fail(InvalidRequest.single(`${path}.emailOptOutAt`, "may only be set together with emailOptOut: true"))
    : Result.succeed(input)

export const createCustomer = (input: CustomerCreate) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("customers:write")
    yield* Effect.fromResult(checkOptOut(input, "body"))
    const repo = yield* CatalogRepository
    return yield* transactional(Effect.gen(function*() {
      const customer = newCustomer(input, yield* nextId<CustomerId>(), yield* now)
      const [outcome] = yield* repo.insertCustomers(organizationId, [customer])
      if (outcome?._tag === "Clash") {
        return yield* conflict(`${customerClash(customer, outcome.field)}; fetch that customer instead`)
      }
      yield* recordEvent(organizationId, "customer.updated", customer)
      return customer
    }))
  })

export const listCustomers = (params: ListParams) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("customers:read")
    const request = yield* listRequestFor(params, customerListEndpoint, organizationId)
    return yield* (yield* CatalogRepository).listCustomers(organizationId, request)
  })

export const getCustomer = (id: CustomerId) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("customers:read")
    return yield* (yield* CatalogRepository).findCustomer(organizationId, id).pipe(
      Effect.flatMap(orNotFound("customer", id))
    )
  })

export const importCustomers = (body: CustomerImport) =>
  Effect.gen(function*() {
    const { organizationId } = yield* requirePermission("customers:write")
    for (const [i, row] of body.data.entries()) yield* Effect.fromResult(checkOptOut(row, `body.data[${i}]`))
    const repo = yield* CatalogRepository
    return yield* runImport({
      organizationId,
      rows: body.data,
      strict: body.strict ?? false,
      build: (row: CustomerCreate, at) => Effect.map(nextId<CustomerId>(), (id) => newCustomer(row, id, at)),
      uniques: customerUniques,
      insert: (records) => repo.insertCustomers(organizationId, records),
      clash: customerClash,
      event: "customer.updated"
    })
  })
