/** Handlers of the catalog groups: each calls the core use-case with the captured store services. */
import { CatalogRepository, Catalogs, type CursorKey, type EventOutbox, type IdGenerator, type UnitOfWork } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "../api/Api.ts"

type Services = CatalogRepository | UnitOfWork | EventOutbox | IdGenerator | CursorKey

export const SitesHandlers = HttpApiBuilder.group(AdminApi, "sites", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  return handlers
    .handle("create", ({ payload }) => Catalogs.createSite(payload).pipe(Effect.provide(services)))
    .handle("list", ({ query }) => Catalogs.listSites(query).pipe(Effect.provide(services)))
    .handle("get", ({ params }) => Catalogs.getSite(params.id).pipe(Effect.provide(services)))
}))

export const ProductsHandlers = HttpApiBuilder.group(AdminApi, "products", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  return handlers
    .handle("create", ({ payload }) => Catalogs.createProduct(payload).pipe(Effect.provide(services)))
    .handle("list", ({ query }) => Catalogs.listProducts(query).pipe(Effect.provide(services)))
    .handle("import", ({ payload }) => Catalogs.importProducts(payload).pipe(Effect.provide(services)))
    .handle("get", ({ params }) => Catalogs.getProduct(params.id).pipe(Effect.provide(services)))
    .handle("update", ({ params, payload }) => Catalogs.updateProduct(params.id, payload).pipe(Effect.provide(services)))
    .handle("delete", ({ params }) => Catalogs.deleteProduct(params.id).pipe(Effect.provide(services)))
}))

export const CustomersHandlers = HttpApiBuilder.group(AdminApi, "customers", Effect.fn(function*(handlers) {
  const services = yield* Effect.context<Services>()
  return handlers
    .handle("create", ({ payload }) => Catalogs.createCustomer(payload).pipe(Effect.provide(services)))
    .handle("list", ({ query }) => Catalogs.listCustomers(query).pipe(Effect.provide(services)))
    .handle("import", ({ payload }) => Catalogs.importCustomers(payload).pipe(Effect.provide(services)))
    .handle("get", ({ params }) => Catalogs.getCustomer(params.id).pipe(Effect.provide(services)))
}))
