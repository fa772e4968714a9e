/**
 * Catalog records the reviews need (docs/DECISIONS.md §9): sites, products and customers. The spec names these endpoints
 * without shapes; the records are the core's `Site`, `Product` (with review stats) and `Customer`.
 */
import { Catalog, Kernel } from "@feedback/core"
import { HttpApiGroup } from "effect/http-api"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { recordEndpoints } from "../RecordEndpoints.ts"
import { SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const sites = recordEndpoints({
  path: "/sites",
  id: Kernel.SiteId,
  schema: Catalog.Site,
  read: "settings:read",
  write: "settings:write"
})

export class SitesApi extends HttpApiGroup.make("sites")
  .add(
    sites.create(
      Catalog.SiteCreate,
      [InvalidRequestResponse],
      doc(
        "Create a site",
        "Registers one of your storefronts (name and domain). Reviews and questions can name the site they were left on. Answers the new site."
      )
    ),
    sites.list(
      Catalog.siteListEndpoint,
      doc(
        "List sites",
        "Your sites, a page at a time: pass `nextCursor` back as `cursor` for the next page; `sort`, `search` and `filter` narrow and order it."
      )
    ),
    sites.get(doc(
      "Get a site",
      "One site by id; 404 when it is not one of your organization's."
    ))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Sites", "The merchant's storefront sites."))
{}

const products = recordEndpoints({
  path: "/products",
  id: Kernel.ProductId,
  schema: Catalog.Product,
  read: "products:read",
  write: "products:write"
})

export class ProductsApi extends HttpApiGroup.make("products")
  .add(
    products.create(
      Catalog.ProductCreate,
      [ConflictResponse, InvalidRequestResponse],
      doc(
        "Create a product",
        "Adds a product to your catalog so reviews and questions can be attached to it. `slug` and `externalId` must be unique in your organization (409 otherwise). Answers the product with its review stats (zero)."
      )
    ),
    products.list(
      Catalog.productListEndpoint,
      doc(
        "List products",
        "Your products with their review stats (`reviewCount`, `publishedReviewCount`, `averageRating`), a page at a time; `sort`, `search` and `filter` narrow and order it."
      )
    ),
    products.import(
      Catalog.ProductImport,
      doc(
        "Import products",
        "Creates or updates many products in one transaction, matched on `externalId`: use it to sync your catalog. Rows that cannot be imported are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`, nothing imported)."
      )
    ),
    products.get(doc(
      "Get a product",
      "One product with its review stats."
    )),
    products.update(
      Catalog.ProductPatch,
      [NotFoundResponse, ConflictResponse, InvalidRequestResponse],
      doc(
        "Update a product",
        "Changes the sent fields only. A `slug` or `externalId` another product has is a 409. Answers the product as it is now."
      )
    ),
    products.delete(
      [NotFoundResponse, ConflictResponse, InvalidRequestResponse],
      doc(
        "Delete a product",
        "Deletes the product and answers it as it was. A product that reviews still refer to is a 409: delete or move those reviews first."
      )
    )
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Products",
    "Products reviews and questions are about. `slug` and `externalId` are unique per organization; " +
      "a product that reviews still refer to cannot be deleted (409)."
  ))
{}

const customers = recordEndpoints({
  path: "/customers",
  id: Kernel.CustomerId,
  schema: Catalog.Customer,
  read: "customers:read",
  write: "customers:write"
})

export class CustomersApi extends HttpApiGroup.make("customers")
  .add(
    customers.create(
      Catalog.CustomerCreate,
      [ConflictResponse, InvalidRequestResponse],
      doc(
        "Create a customer",
        "Records a shopper. `email` is stored lower-cased and must be unique in your organization (409 otherwise)."
      )
    ),
    customers.list(
      Catalog.customerListEndpoint,
      doc(
        "List customers",
        "Your customers, a page at a time; `sort`, `search` (name and email) and `filter` narrow and order it."
      )
    ),
    customers.import(
      Catalog.CustomerImport,
      doc(
        "Import customers",
        "Creates or updates many customers in one transaction, matched on `email`: use it to sync your shop's customers. Rows that cannot be imported are listed under `skipped`, or with `strict` the first one fails the import (422 `IMPORT_FAILED`)."
      )
    ),
    customers.get(doc(
      "Get a customer",
      "One customer by id."
    ))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Customers", "Shoppers. `email` is stored lower-cased and unique per organization."))
{}
