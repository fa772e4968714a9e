/**
 * Use-cases of the catalog records (docs/DECISIONS.md §9): sites, products and customers, as the `Catalogs` service.
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
import { Context, Effect, Layer, Option, Result } from "effect"
import { type Customer, newCustomer, newProduct, type Product, type Site } from "./Catalog.ts"
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
import { type CurrentCaller, requirePermission } from "../kernel/Caller.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { Conflict, type Forbidden, ImportFailed, InvalidRequest, NotFound } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { CustomerId, OrganizationId, ProductId, SiteId } from "../kernel/Ids.ts"
import { listRequestWith, type ListParams, type Page } from "../kernel/ListQuery.ts"
import { normalize, now, type Timestamp } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"

export class Catalogs extends Context.Service<Catalogs, {
  readonly createSite: (input: SiteCreate) => Effect.Effect<Site, Forbidden, CurrentCaller>
  readonly listSites: (params: ListParams) => Effect.Effect<Page<Site>, Forbidden | InvalidRequest, CurrentCaller>
  readonly getSite: (id: SiteId) => Effect.Effect<Site, Forbidden | NotFound, CurrentCaller>

  readonly createProduct: (input: ProductCreate) => Effect.Effect<Product, Forbidden | Conflict, CurrentCaller>
  readonly listProducts: (params: ListParams) => Effect.Effect<Page<Product>, Forbidden | InvalidRequest, CurrentCaller>
  readonly getProduct: (id: ProductId) => Effect.Effect<Product, Forbidden | NotFound, CurrentCaller>
  /** Sent fields replace stored ones; a PATCH that changes nothing writes nothing and fires no event. */
  readonly updateProduct: (
    id: ProductId,
    patch: ProductPatch
  ) => Effect.Effect<Product, Forbidden | NotFound | Conflict, CurrentCaller>
  /** Answers the deleted product; one that reviews or questions still refer to is a Conflict. */
  readonly deleteProduct: (id: ProductId) => Effect.Effect<Product, Forbidden | NotFound | Conflict, CurrentCaller>
  readonly importProducts: (body: ProductImport) => Effect.Effect<ImportResult, Forbidden | ImportFailed, CurrentCaller>

  readonly createCustomer: (
    input: CustomerCreate
  ) => Effect.Effect<Customer, Forbidden | InvalidRequest | Conflict, CurrentCaller>
  readonly listCustomers: (
    params: ListParams
  ) => Effect.Effect<Page<Customer>, Forbidden | InvalidRequest, CurrentCaller>
  readonly getCustomer: (id: CustomerId) => Effect.Effect<Customer, Forbidden | NotFound, CurrentCaller>
  readonly importCustomers: (
    body: CustomerImport
  ) => Effect.Effect<ImportResult, Forbidden | InvalidRequest | ImportFailed, CurrentCaller>
}>()("feedback/Catalogs") {
  static readonly layer = Layer.effect(
    Catalogs,
    Effect.gen(function*() {
      const repo = yield* CatalogRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const cursorKey = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)

      // -------------------------------------------------------------------------------------------------------------
      // Sites

      const createSite = Effect.fn("Catalogs.createSite")(function*(input: SiteCreate) {
        const { organizationId } = yield* requirePermission("settings:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const at = yield* now
          const site: Site = {
            id: yield* nextIdFrom<SiteId>(ids),
            name: input.name,
            domain: input.domain ?? null,
            createdAt: at,
            updatedAt: at
          }
          yield* repo.insertSite(organizationId, site)
          yield* events.record(organizationId, "site.created", site)
          return site
        }))
      })

      const listSites = Effect.fn("Catalogs.listSites")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("settings:read")
        const request = yield* listRequestWith(cursorKey, params, siteListEndpoint, organizationId)
        return yield* repo.listSites(organizationId, request)
      })

      const getSite = Effect.fn("Catalogs.getSite")(function*(id: SiteId) {
        const { organizationId } = yield* requirePermission("settings:read")
        return yield* repo.findSite(organizationId, id).pipe(Effect.flatMap(orNotFound("site", id)))
      })

      // -------------------------------------------------------------------------------------------------------------
      // Products

      const createProduct = Effect.fn("Catalogs.createProduct")(function*(input: ProductCreate) {
        const { organizationId } = yield* requirePermission("products:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const product = productOf(input, yield* nextIdFrom<ProductId>(ids), yield* now)
          const [outcome] = yield* repo.insertProducts(organizationId, [product])
          if (outcome?._tag === "Clash") {
            return yield* conflict(`${productClash(product, outcome.field)}; choose another ${outcome.field}`)
          }
          yield* events.record(organizationId, "product.updated", product)
          return product
        }))
      })

      const listProducts = Effect.fn("Catalogs.listProducts")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("products:read")
        const request = yield* listRequestWith(cursorKey, params, productListEndpoint, organizationId)
        return yield* repo.listProducts(organizationId, request)
      })

      const getProduct = Effect.fn("Catalogs.getProduct")(function*(id: ProductId) {
        const { organizationId } = yield* requirePermission("products:read")
        return yield* repo.findProduct(organizationId, id).pipe(Effect.flatMap(orNotFound("product", id)))
      })

      const updateProduct = Effect.fn("Catalogs.updateProduct")(function*(id: ProductId, patch: ProductPatch) {
        const { organizationId } = yield* requirePermission("products:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const current = yield* repo.findProduct(organizationId, id).pipe(Effect.flatMap(orNotFound("product", id)))
          if (!patchChanges(current, patch)) return current
          const changed = applyProductPatch(current, patch, yield* now)
          const outcome = yield* repo.updateProduct(organizationId, changed)
          switch (outcome._tag) {
            case "NotFound":
              return yield* NotFound.of("product", id)
            case "Clash":
              return yield* conflict(`${productClash(changed, outcome.field)}; choose another ${outcome.field}`)
            case "Updated":
              yield* events.record(organizationId, "product.updated", outcome.record)
              return outcome.record
          }
        }))
      })

      const deleteProduct = Effect.fn("Catalogs.deleteProduct")(function*(id: ProductId) {
        const { organizationId } = yield* requirePermission("products:write")
        return yield* uow.transaction(Effect.gen(function*() {
          const outcome = yield* repo.deleteProduct(organizationId, id)
          switch (outcome._tag) {
            case "NotFound":
              return yield* NotFound.of("product", id)
            case "Referenced":
              return yield* conflict(
                "this product still has reviews or questions; delete them first (reviews keep their product for good)"
              )
            case "Deleted":
              yield* events.record(organizationId, "product.deleted", outcome.record)
              return outcome.record
          }
        }))
      })

      // -------------------------------------------------------------------------------------------------------------
      // Imports

      /**
       * The shared import procedure: build records, drop rows that repeat an earlier row's unique value, store the
       * rest in one set-based insert, record one event per imported record, answer by index. With `strict` any
       * skipped row fails the whole import (the unit of work rolls back, so nothing is imported).
       */
      const runImport = <Row, A extends { readonly id: string }>(options: {
        readonly organizationId: OrganizationId
        readonly rows: ReadonlyArray<Row>
        readonly strict: boolean
        readonly build: (row: Row, at: Timestamp) => Effect.Effect<A>
        readonly uniques: (record: A) => ReadonlyArray<readonly [UniqueField, string | null]>
        readonly insert: (records: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<InsertOutcome>>
        readonly clash: (record: A, field: UniqueField) => string
        readonly event: string
      }) =>
        uow.transaction(Effect.gen(function*() {
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
          if (options.strict) yield* failStrict(early)
          const outcomes = yield* options.insert(attempted.map((r) => r.record))
          const result: ImportResult = importResult(attempted, outcomes, early, options.clash)
          if (options.strict) yield* failStrict(result.skipped)
          const importedIds = new Set(result.imported.map((r) => r.id))
          yield* events.recordAll(
            options.organizationId,
            attempted.filter((r) => importedIds.has(r.record.id)).map((r) => ({ event: options.event, data: r.record }))
          )
          return result
        }))

      const importProducts = Effect.fn("Catalogs.importProducts")(function*(body: ProductImport) {
        const { organizationId } = yield* requirePermission("products:write")
        return yield* runImport({
          organizationId,
          rows: body.data,
          strict: body.strict ?? false,
          build: (row: ProductCreate, at) => Effect.map(nextIdFrom<ProductId>(ids), (id) => productOf(row, id, at)),
          uniques: productUniques,
          insert: (records) => repo.insertProducts(organizationId, records),
          clash: productClash,
          event: "product.updated"
        })
      })

      // -------------------------------------------------------------------------------------------------------------
      // Customers

      const createCustomer = Effect.fn("Catalogs.createCustomer")(function*(input: CustomerCreate) {
        const { organizationId } = yield* requirePermission("customers:write")
        yield* Effect.fromResult(checkOptOut(input, "body"))
        return yield* uow.transaction(Effect.gen(function*() {
          const customer = customerOf(input, yield* nextIdFrom<CustomerId>(ids), yield* now)
          const [outcome] = yield* repo.insertCustomers(organizationId, [customer])
          if (outcome?._tag === "Clash") {
            return yield* conflict(`${customerClash(customer, outcome.field)}; fetch that customer instead`)
          }
          yield* events.record(organizationId, "customer.updated", customer)
          return customer
        }))
      })

      const listCustomers = Effect.fn("Catalogs.listCustomers")(function*(params: ListParams) {
        const { organizationId } = yield* requirePermission("customers:read")
        const request = yield* listRequestWith(cursorKey, params, customerListEndpoint, organizationId)
        return yield* repo.listCustomers(organizationId, request)
      })

      const getCustomer = Effect.fn("Catalogs.getCustomer")(function*(id: CustomerId) {
        const { organizationId } = yield* requirePermission("customers:read")
        return yield* repo.findCustomer(organizationId, id).pipe(Effect.flatMap(orNotFound("customer", id)))
      })

      const importCustomers = Effect.fn("Catalogs.importCustomers")(function*(body: CustomerImport) {
        const { organizationId } = yield* requirePermission("customers:write")
        for (const [i, row] of body.data.entries()) yield* Effect.fromResult(checkOptOut(row, `body.data[${i}]`))
        return yield* runImport({
          organizationId,
          rows: body.data,
          strict: body.strict ?? false,
          build: (row: CustomerCreate, at) => Effect.map(nextIdFrom<CustomerId>(ids), (id) => customerOf(row, id, at)),
          uniques: customerUniques,
          insert: (records) => repo.insertCustomers(organizationId, records),
          clash: customerClash,
          event: "customer.updated"
        })
      })

      return Catalogs.of({
        createSite,
        listSites,
        getSite,
        createProduct,
        listProducts,
        getProduct,
        updateProduct,
        deleteProduct,
        importProducts,
        createCustomer,
        listCustomers,
        getCustomer,
        importCustomers
      })
    })
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Pure rules

const orNotFound = <A>(resource: string, id: string) => (found: Option.Option<A>) =>
  Option.match(found, { onNone: () => Effect.fail(NotFound.of(resource, id)), onSome: Effect.succeed })

const conflict = (message: string) => new Conflict({ message: `${message[0]!.toUpperCase()}${message.slice(1)}.` })

const failStrict = (skipped: ReadonlyArray<{ readonly index: number; readonly message: string }>) => {
  const first = skipped[0]
  return first === undefined ? Effect.void : Effect.fail(
    new ImportFailed({
      index: first.index,
      message: `Row ${first.index} cannot be imported: ${first.message}; nothing was imported.`
    })
  )
}

const productOf = (input: ProductCreate, id: ProductId, at: Timestamp): Product =>
  newProduct(id, at, {
    slug: input.slug,
    title: input.title,
    description: input.description ?? null,
    imageUrl: input.imageUrl ?? null,
    url: input.url ?? null,
    externalId: input.externalId ?? null,
    metadata: input.metadata ?? {},
    notes: input.notes ?? null
  })

const productUniques = (p: Product): ReadonlyArray<readonly [UniqueField, string | null]> => [
  ["slug", p.slug],
  ["externalId", p.externalId]
]

const productClash = (p: Product, field: UniqueField) =>
  clashMessage("product", field, field === "slug" ? p.slug : p.externalId ?? "")

/** Applies a PATCH body: sent fields replace stored ones (`metadata` wholesale), `null` clears a nullable field. */
const applyProductPatch = (product: Product, patch: ProductPatch, at: Timestamp): Product => ({
  ...product,
  ...patch,
  updatedAt: at
})

/** Whether any sent field differs from the stored value (metadata compared as a set of entries). */
const patchChanges = (product: Product, patch: ProductPatch): boolean =>
  Object.entries(patch).some(([key, value]) => {
    const stored = (product as Record<string, unknown>)[key]
    if (key === "metadata") {
      const a = stored as Readonly<Record<string, string>>
      const b = value as Readonly<Record<string, string>>
      return Object.keys(a).length !== Object.keys(b).length ||
        Object.entries(b).some(([k, v]) => !Object.hasOwn(a, k) || a[k] !== v)
    }
    return stored !== value
  })

const customerOf = (input: CustomerCreate, id: CustomerId, at: Timestamp): Customer => {
  const optedOut = input.emailOptOut ?? false
  return newCustomer(id, at, {
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
    emailOptOutSource: input.emailOptOutSource ?? null
  })
}

const customerUniques = (c: Customer): ReadonlyArray<readonly [UniqueField, string | null]> => [["email", c.email]]
const customerClash = (c: Customer, field: UniqueField) => clashMessage("customer", field, c.email)

/** `emailOptOutAt` only makes sense for a customer who opted out. */
/** A customer row whose `emailOptOutAt` comes without `emailOptOut: true` is refused (shared with import jobs). */
export const checkOptOut = (input: CustomerCreate, path: string): Result.Result<CustomerCreate, InvalidRequest> =>
  input.emailOptOutAt != null && input.emailOptOut !== true
    ? Result.fail(InvalidRequest.single(`${path}.emailOptOutAt`, "may only be set together with emailOptOut: true"))
    : Result.succeed(input)
