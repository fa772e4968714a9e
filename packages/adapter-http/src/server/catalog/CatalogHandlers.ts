/** Handlers of the catalog groups: one call into the `Catalogs` service per endpoint. */
import { Catalog } from "@feedback/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AdminApi } from "@feedback/client/effect"
import { capturingOnly } from "../HandlerGroups.ts"
import { decodeJsonBody } from "../JsonBodyParse.ts"

export const SitesHandlers = HttpApiBuilder.group(
  AdminApi,
  "sites",
  Effect.fn(function*(handlers) {
    const catalogs = yield* Catalog.Catalogs
    return handlers
      .handle("create", ({ payload }) => catalogs.createSite(payload))
      .handle("list", ({ query }) => catalogs.listSites(query))
      .handle("get", ({ params }) => catalogs.getSite(params.id))
  })
).pipe(capturingOnly(Catalog.Catalogs))

export const ProductsHandlers = HttpApiBuilder.group(
  AdminApi,
  "products",
  Effect.fn(function*(handlers) {
    const catalogs = yield* Catalog.Catalogs
    return handlers
      .handle("create", ({ payload }) => catalogs.createProduct(payload))
      .handle("list", ({ query }) => catalogs.listProducts(query))
      .handleRaw("import", () => Effect.flatMap(decodeJsonBody(Catalog.ProductImport), catalogs.importProducts))
      .handle("get", ({ params }) => catalogs.getProduct(params.id))
      .handle("update", ({ params, payload }) => catalogs.updateProduct(params.id, payload))
      .handle("delete", ({ params }) => catalogs.deleteProduct(params.id))
  })
).pipe(capturingOnly(Catalog.Catalogs))

export const CustomersHandlers = HttpApiBuilder.group(
  AdminApi,
  "customers",
  Effect.fn(function*(handlers) {
    const catalogs = yield* Catalog.Catalogs
    return handlers
      .handle("create", ({ payload }) => catalogs.createCustomer(payload))
      .handle("list", ({ query }) => catalogs.listCustomers(query))
      .handleRaw("import", () => Effect.flatMap(decodeJsonBody(Catalog.CustomerImport), catalogs.importCustomers))
      .handle("get", ({ params }) => catalogs.getCustomer(params.id))
  })
).pipe(capturingOnly(Catalog.Catalogs))
