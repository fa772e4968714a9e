/**
 * The list fields of reviews (docs/DECISIONS.md §4): what `GET /reviews` filters on (spec: "Filterable fields"),
 * sorts by and includes. `PATCH /reviews/bulk-update` and export jobs match with the same catalog.
 */
import { relatedCatalogFilterFields, relatedMetadataPrefixes } from "../catalog/CatalogLists.ts"
import { type FieldCatalog, makeFieldCatalog } from "../kernel/Filter.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"

export const reviewFilterCatalog: FieldCatalog = makeFieldCatalog(
  {
    id: "uuid",
    rating: "number",
    published: "boolean",
    flagged: "boolean",
    moderatedAt: "timestamp",
    surveyId: "uuid",
    ipAddress: "string",
    browserFingerprint: "string",
    createdAt: "timestamp",
    /** Incremental sync (docs/DECISIONS.md §48). */
    updatedAt: "timestamp",
    ...relatedCatalogFilterFields
  },
  relatedMetadataPrefixes
)

export const reviewListEndpoint = defineListEndpoint({
  name: "reviews",
  sorts: ["rating", "-rating", "createdAt", "-createdAt", "moderatedAt", "-moderatedAt", "updatedAt", "-updatedAt"],
  defaultSort: "-createdAt",
  includes: ["importJob", "customer", "product", "response", "files", "answers", "collisions"],
  catalog: reviewFilterCatalog
})
