/**
 * Catalog records the reviews need (docs/DECISIONS.md §9): sites, products and customers. The spec names these endpoints
 * without shapes; the records are the core's `Site`, `Product` (with review stats) and `Customer`.
 */
import { Catalog, Kernel } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ConflictResponse, ImportFailedResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { listQuery, pageOf } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

export class SitesApi extends HttpApiGroup.make("sites")
  .add(
    HttpApiEndpoint.post("create", "/sites", {
      payload: Catalog.SiteCreate,
      success: Catalog.Site.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Create a site",
        "Registers one of your storefronts (name and domain). Reviews and questions can name the site they were left on. Answers the new site."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.get("list", "/sites", {
      query: listQuery(Catalog.siteListEndpoint),
      success: pageOf(Catalog.Site),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List sites",
        "Your sites, a page at a time: pass `nextCursor` back as `cursor` for the next page; `sort`, `search` and `filter` narrow and order it."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.get("get", "/sites/:id", {
      params: { id: Kernel.SiteId },
      success: Catalog.Site,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Get a site",
        "One site by id; 404 when it is not one of your organization's."
      ))
      .pipe(requires("settings:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Sites", "The merchant's storefront sites."))
{}

export class ProductsApi extends HttpApiGroup.make("products")
  .add(
    HttpApiEndpoint.post("create", "/products", {
      payload: Catalog.ProductCreate,
      success: Catalog.Product.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Create a product",
        "Adds a product to your catalog so reviews and questions can be attached to it. `slug` and `externalId` must be unique in your organization (409 otherwise). Answers the product with its review stats (zero)."
      ))
      .pipe(requires("products:write")),
    HttpApiEndpoint.get("list", "/products", {
      query: listQuery(Catalog.productListEndpoint),
      success: pageOf(Catalog.Product),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List products",
        "Your products with their review stats (`reviewCount`, `publishedReviewCount`, `averageRating`), a page at a time; `sort`, `search` and `filter` narrow and order it."
      ))
      .pipe(requires("products:read")),
    HttpApiEndpoint.post("import", "/products/import", {
      payload: Catalog.ProductImport,
      success: Catalog.ImportResult,
      error: [ImportFailedResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Import products",
        "Creates or updates many products in one transaction, matched on `externalId`: use it to sync your catalog. Rows that cannot be imported are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`, nothing imported)."
      ))
      .pipe(requires("products:write")),
    HttpApiEndpoint.get("get", "/products/:id", {
      params: { id: Kernel.ProductId },
      success: Catalog.Product,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Get a product",
        "One product with its review stats."
      ))
      .pipe(requires("products:read")),
    HttpApiEndpoint.patch("update", "/products/:id", {
      params: { id: Kernel.ProductId },
      payload: Catalog.ProductPatch,
      success: Catalog.Product,
      error: [NotFoundResponse, ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Update a product",
        "Changes the sent fields only. A `slug` or `externalId` another product has is a 409. Answers the product as it is now."
      ))
      .pipe(requires("products:write")),
    HttpApiEndpoint.delete("delete", "/products/:id", {
      params: { id: Kernel.ProductId },
      success: Catalog.Product,
      error: [NotFoundResponse, ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Delete a product",
        "Deletes the product and answers it as it was. A product that reviews still refer to is a 409: delete or move those reviews first."
      ))
      .pipe(requires("products:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Products",
    "Products reviews and questions are about. `slug` and `externalId` are unique per organization; " +
      "a product that reviews still refer to cannot be deleted (409)."
  ))
{}

export class CustomersApi extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/customers", {
      payload: Catalog.CustomerCreate,
      success: Catalog.Customer.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Create a customer",
        "Records a shopper. `email` is stored lower-cased and must be unique in your organization (409 otherwise)."
      ))
      .pipe(requires("customers:write")),
    HttpApiEndpoint.get("list", "/customers", {
      query: listQuery(Catalog.customerListEndpoint),
      success: pageOf(Catalog.Customer),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List customers",
        "Your customers, a page at a time; `sort`, `search` (name and email) and `filter` narrow and order it."
      ))
      .pipe(requires("customers:read")),
    HttpApiEndpoint.post("import", "/customers/import", {
      payload: Catalog.CustomerImport,
      success: Catalog.ImportResult,
      error: [ImportFailedResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Import customers",
        "Creates or updates many customers in one transaction, matched on `email`: use it to sync your shop's customers. Rows that cannot be imported are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`)."
      ))
      .pipe(requires("customers:write")),
    HttpApiEndpoint.get("get", "/customers/:id", {
      params: { id: Kernel.CustomerId },
      success: Catalog.Customer,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Get a customer",
        "One customer by id."
      ))
      .pipe(requires("customers:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Customers", "Shoppers. `email` is stored lower-cased and unique per organization."))
{}
