/**
 * Reading reviews (spec: GET /reviews, GET /reviews/{id}). The write side (moderation, redaction, deletion,
 * bulk update, import, replies) is a separate group.
 */
import { Kernel, Reviews } from "@feedback/core"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { includeParam, listQuery, pageOf } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const include = includeParam(Reviews.reviewListEndpoint.includes)

/** The answer of `GET /reviews` (its handler encodes it with a compiled encoder, so the schema is shared). */
export const ReviewPage = pageOf(Reviews.Review)

// The group's identifier stays `reviewsRead`: it prefixes the public operationIds (`reviewsRead.list`) and names the
// typed client's group (`client.reviewsRead`).
export class ReviewsApi extends HttpApiGroup.make("reviewsRead")
  .add(
    HttpApiEndpoint.get("list", "/reviews", {
      query: { ...listQuery(Reviews.reviewListEndpoint), include },
      success: ReviewPage,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List reviews",
        "Your reviews, newest first by default, published or not, a page at a time: pass `nextCursor` back " +
          "as `cursor` for the next page. `sort`, `search` and `filter` narrow and order it; `include` adds related records."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.get("get", "/reviews/:id", {
      params: { id: Kernel.ReviewId },
      query: { include },
      success: Reviews.Review,
      error: [NotFoundResponse, InvalidRequestResponse]
    })
      .annotateMerge(doc(
        "Get a review",
        "One review, published or not; `include` adds the customer, product, reply, files, survey answers, import provenance or collision counts."
      ))
      .pipe(requires("reviews:read"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Reviews", "Customer reviews: reading."))
{}
