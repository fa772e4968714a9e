/**
 * The list endpoints of the catalog (docs/DECISIONS.md §9: "Lists follow §4"): `GET /sites`, `GET /products` and
 * `GET /customers` take `limit`, `cursor`, `sort` (`createdAt` / `-createdAt`, default newest first), `search` and
 * `filter`, answered by the same list language as reviews. The spec names no filterable fields for these
 * endpoints; each filters on the fields reviews can filter its records by (`product.*`, `customer.*`), plus the
 * obvious identifying ones, and any metadata key. `searchFields` are the record fields `search` looks in.
 */
import { type FieldType, makeFieldCatalog, prefixFields } from "../kernel/Filter.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"

const createdAtSorts = ["createdAt", "-createdAt"] as const

const productFilterFields: Readonly<Record<string, FieldType>> = {
  id: "uuid",
  slug: "string",
  title: "string",
  createdAt: "timestamp"
}

const customerFilterFields: Readonly<Record<string, FieldType>> = {
  id: "uuid",
  email: "string",
  firstName: "string",
  lastName: "string",
  emailOptOut: "boolean",
  emailOptOutSource: "string",
  createdAt: "timestamp"
}

/** The fields of a record's product and customer (`product.slug`, `customer.email`, …), as reviews and questions filter them. */
export const relatedCatalogFilterFields: Readonly<Record<string, FieldType>> = {
  ...prefixFields("product", productFilterFields),
  ...prefixFields("customer", customerFilterFields)
}

/** The metadata prefixes of a record with a product and a customer: its own, its product's and its customer's. */
export const relatedMetadataPrefixes = ["metadata", "product.metadata", "customer.metadata"] as const

const siteFilterFields: Readonly<Record<string, FieldType>> = {
  id: "uuid",
  name: "string",
  domain: "string",
  createdAt: "timestamp"
}

export const siteListEndpoint = defineListEndpoint({
  name: "sites",
  sorts: createdAtSorts,
  defaultSort: "-createdAt",
  includes: [],
  catalog: makeFieldCatalog(siteFilterFields)
})

export const productListEndpoint = defineListEndpoint({
  name: "products",
  sorts: createdAtSorts,
  defaultSort: "-createdAt",
  includes: [],
  catalog: makeFieldCatalog({ ...productFilterFields, externalId: "string" }, ["metadata"])
})

export const customerListEndpoint = defineListEndpoint({
  name: "customers",
  sorts: createdAtSorts,
  defaultSort: "-createdAt",
  includes: [],
  catalog: makeFieldCatalog(customerFilterFields, ["metadata"])
})

/** The fields `search` looks in, per endpoint (record field names). */
export const catalogSearchFields = {
  sites: ["name", "domain"],
  products: ["title", "slug"],
  customers: ["email", "firstName", "lastName"]
} as const
