/**
 * The list fields of product questions (docs/DECISIONS.md §4): what `GET /product-questions` filters on (spec:
 * "Filterable fields"), sorts by and includes.
 */
import { relatedCatalogFilterFields, relatedMetadataPrefixes } from "../catalog/CatalogLists.ts"
import { type FieldCatalog, makeFieldCatalog } from "../kernel/Filter.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"

export const productQuestionFilterCatalog: FieldCatalog = makeFieldCatalog(
  {
    id: "uuid",
    published: "boolean",
    flagged: "boolean",
    moderatedAt: "timestamp",
    answeredAt: "timestamp",
    source: "string",
    createdAt: "timestamp",
    /** Incremental sync (docs/DECISIONS.md §48). */
    updatedAt: "timestamp",
    ...relatedCatalogFilterFields
  },
  relatedMetadataPrefixes
)

export const productQuestionListEndpoint = defineListEndpoint({
  name: "product-questions",
  sorts: [
    "createdAt",
    "-createdAt",
    "moderatedAt",
    "-moderatedAt",
    "answeredAt",
    "-answeredAt",
    "updatedAt",
    "-updatedAt"
  ],
  defaultSort: "-createdAt",
  includes: ["customer", "product", "answers"],
  catalog: productQuestionFilterCatalog
})
