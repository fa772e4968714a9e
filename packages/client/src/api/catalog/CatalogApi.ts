/**
 * Catalog records the reviews need (docs/DECISIONS.md §9): sites, products and customers. The spec names these endpoints
 * without shapes; the records are the core's `Site`, `Product` (with review stats) and `Customer`.
 */
import {
  Customer,
  CustomerCreate,
  CustomerId,
  CustomerImport,
  customerListEndpoint,
  ImportResult,
  Product,
  ProductCreate,
  ProductId,
  ProductImport,
  productListEndpoint,
  ProductPatch,
  Site,
  SiteCreate,
  SiteId,
  siteListEndpoint
} from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ConflictResponse, ImportFailedResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { listQuery, pageOf } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

export class SitesApi extends HttpApiGroup.make("sites")
  .add(
    HttpApiEndpoint.post("create", "/sites", {
      payload: SiteCreate,
      success: Site.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    }).pipe(requires("settings:write")),
    HttpApiEndpoint.get("list", "/sites", {
      query: listQuery(siteListEndpoint),
      success: pageOf(Site),
      error: InvalidRequestResponse
    }).pipe(requires("settings:read")),
    HttpApiEndpoint.get("get", "/sites/:id", {
      params: { id: SiteId },
      success: Site,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).pipe(requires("settings:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({ title: "Sites", description: "The merchant's storefront sites." }))
{}

export class ProductsApi extends HttpApiGroup.make("products")
  .add(
    HttpApiEndpoint.post("create", "/products", {
      payload: ProductCreate,
      success: Product.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    }).pipe(requires("products:write")),
    HttpApiEndpoint.get("list", "/products", {
      query: listQuery(productListEndpoint),
      success: pageOf(Product),
      error: InvalidRequestResponse
    }).pipe(requires("products:read")),
    HttpApiEndpoint.post("import", "/products/import", {
      payload: ProductImport,
      success: ImportResult,
      error: [ImportFailedResponse, InvalidRequestResponse]
    }).pipe(requires("products:write")),
    HttpApiEndpoint.get("get", "/products/:id", {
      params: { id: ProductId },
      success: Product,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).pipe(requires("products:read")),
    HttpApiEndpoint.patch("update", "/products/:id", {
      params: { id: ProductId },
      payload: ProductPatch,
      success: Product,
      error: [NotFoundResponse, ConflictResponse, InvalidRequestResponse]
    }).pipe(requires("products:write")),
    HttpApiEndpoint.delete("delete", "/products/:id", {
      params: { id: ProductId },
      success: Product,
      error: [NotFoundResponse, ConflictResponse, InvalidRequestResponse]
    }).pipe(requires("products:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Products",
    description: "Products reviews and questions are about. `slug` and `externalId` are unique per organization; " +
      "a product that reviews still refer to cannot be deleted (409)."
  }))
{}

export class CustomersApi extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/customers", {
      payload: CustomerCreate,
      success: Customer.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    }).pipe(requires("customers:write")),
    HttpApiEndpoint.get("list", "/customers", {
      query: listQuery(customerListEndpoint),
      success: pageOf(Customer),
      error: InvalidRequestResponse
    }).pipe(requires("customers:read")),
    HttpApiEndpoint.post("import", "/customers/import", {
      payload: CustomerImport,
      success: ImportResult,
      error: [ImportFailedResponse, InvalidRequestResponse]
    }).pipe(requires("customers:write")),
    HttpApiEndpoint.get("get", "/customers/:id", {
      params: { id: CustomerId },
      success: Customer,
      error: [NotFoundResponse, InvalidRequestResponse]
    }).pipe(requires("customers:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Customers",
    description: "Shoppers. `email` is stored lower-cased and unique per organization."
  }))
{}
