/**
 * Storage of catalog records: sites, products and customers (docs/DECISIONS.md §9). Every operation is scoped to one
 * organization; a record of another organization is never found, changed or counted.
 *
 * Bulk inserts are set-based (one statement for the batch in PostgreSQL) and never fail on a uniqueness clash:
 * each row comes back as inserted or as clashing with a stored record, so an import can report rows by index and
 * a single create can answer 409. Rows of one batch must not clash with each other (the caller removes such
 * duplicates first, see `CatalogImport.ts`).
 */
import { Context, type Effect, type Option } from "effect"
import type { Customer, Product, Site } from "./Catalog.ts"
import type { CustomerId, OrganizationId, ProductId, SiteId } from "../kernel/Ids.ts"
import type { ListRequest, Page } from "../kernel/ListQuery.ts"

/** A unique field of a catalog record: products' `slug` and `externalId`, customers' `email`. */
export type UniqueField = "slug" | "externalId" | "email"

export type InsertOutcome =
  | { readonly _tag: "Inserted" }
  | { readonly _tag: "Clash"; readonly field: UniqueField }

export type UpdateOutcome<A> =
  | { readonly _tag: "Updated"; readonly record: A }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Clash"; readonly field: UniqueField }

export type DeleteOutcome<A> =
  | { readonly _tag: "Deleted"; readonly record: A }
  | { readonly _tag: "NotFound" }
  /** Other records (reviews, questions) still refer to it. */
  | { readonly _tag: "Referenced" }

export class CatalogRepository extends Context.Service<CatalogRepository, {
  readonly insertSite: (organizationId: OrganizationId, site: Site) => Effect.Effect<void>
  readonly findSite: (organizationId: OrganizationId, id: SiteId) => Effect.Effect<Option.Option<Site>>
  readonly listSites: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Site>>

  /** One outcome per product, in order; clashing rows are not inserted. */
  readonly insertProducts: (
    organizationId: OrganizationId,
    products: ReadonlyArray<Product>
  ) => Effect.Effect<ReadonlyArray<InsertOutcome>>
  readonly findProduct: (organizationId: OrganizationId, id: ProductId) => Effect.Effect<Option.Option<Product>>
  /** The organization's products among `ids`, in one read (an email lists an order's products); unknown ids are left out. */
  readonly findProducts: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<ProductId>
  ) => Effect.Effect<ReadonlyArray<Product>>
  readonly listProducts: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Product>>
  /** Replaces the stored product's editable fields (not its review stats) with those of `product`. */
  readonly updateProduct: (organizationId: OrganizationId, product: Product) => Effect.Effect<UpdateOutcome<Product>>
  readonly deleteProduct: (organizationId: OrganizationId, id: ProductId) => Effect.Effect<DeleteOutcome<Product>>

  /** One outcome per customer, in order; clashing rows are not inserted. Emails arrive lower-cased. */
  readonly insertCustomers: (
    organizationId: OrganizationId,
    customers: ReadonlyArray<Customer>
  ) => Effect.Effect<ReadonlyArray<InsertOutcome>>
  readonly findCustomer: (organizationId: OrganizationId, id: CustomerId) => Effect.Effect<Option.Option<Customer>>
  /** The organization's customers among `ids`, in one read (the survey sender's wave); unknown ids are left out. */
  readonly findCustomers: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<CustomerId>
  ) => Effect.Effect<ReadonlyArray<Customer>>
  readonly listCustomers: (organizationId: OrganizationId, request: ListRequest) => Effect.Effect<Page<Customer>>

  /**
   * The organization's storefront content version (docs/DECISIONS.md §70): a value that moves, in the writing
   * transaction, with every committed write to what a publishable key can read (products, customers' names, reviews
   * with their replies and files, questions and answers). Read with one indexed probe; never equal before and after
   * such a write, in any process.
   */
  readonly storefrontVersion: (organizationId: OrganizationId) => Effect.Effect<string>
  /**
   * `findProduct` and `listProducts` with `storefrontVersion` read in the same statement, so in its snapshot: a
   * storefront read that starts with one of them has its tag from its own first read, never newer than its body, and
   * need not wait for anything before it (docs/DECISIONS.md §78). Optional: a store without them is probed first.
   */
  readonly withStorefrontVersion?: {
    readonly findProduct: (
      organizationId: OrganizationId,
      productId: ProductId
    ) => Effect.Effect<WithStorefrontVersion<Option.Option<Product>>>
    readonly listProducts: (
      organizationId: OrganizationId,
      request: ListRequest
    ) => Effect.Effect<WithStorefrontVersion<Page<Product>>>
  }
}>()("feedback/CatalogRepository") {}

/** A read's result with the organization's storefront content version read in the same statement. */
export interface WithStorefrontVersion<A> {
  readonly value: A
  readonly storefrontVersion: string
}
