/**
 * The review write side of the admin API (spec: Reviews): moderation and redaction, deletion, bulk moderation,
 * import, and the merchant's reply. Reading reviews (`GET /reviews`, `GET /reviews/{id}`) is another group.
 */
import { Kernel, Reviews } from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import {
  ConflictResponse,
  ImportFailedResponse,
  InvalidRedactionResponse,
  InvalidRequestResponse,
  NotFoundResponse
} from "../ErrorResponses.ts"
import { doc, docGroup } from "../Describe.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

const params = { id: Kernel.ReviewId }

export class ReviewWritesApi extends HttpApiGroup.make("reviewWrites")
  .add(
    // Declared before `/reviews/:id` so the literal segment is never read as an id.
    HttpApiEndpoint.patch("bulkUpdate", "/reviews/bulk-update", {
      query: { filter: Schema.optionalKey(Schema.String), search: Schema.optionalKey(Schema.String) },
      payload: Reviews.BulkUpdateBody,
      success: Reviews.BulkUpdateResult,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Moderate reviews in bulk",
        "Publishes or rejects every review matching `filter` AND `search` (omitted: every review), stamping each moderated. " +
          "Answers how many matched; fires `review.updated` for each review whose `published` changed."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.post("import", "/reviews/import", {
      payload: Reviews.ImportRequest,
      success: Reviews.ReviewImportResult,
      error: [InvalidRequestResponse, ImportFailedResponse]
    })
      .annotateMerge(doc(
        "Import reviews",
        "Imports up to 10,000 reviews in one transaction. Rows whose product, site or externalId do not resolve " +
          "are skipped and listed, or with `strict` the first of them fails the import (422 IMPORT_FAILED, nothing imported)."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.patch("update", "/reviews/:id", {
      params,
      payload: Reviews.ReviewPatch,
      success: Reviews.ReviewRecord,
      error: [InvalidRequestResponse, NotFoundResponse, InvalidRedactionResponse]
    })
      .annotateMerge(doc(
        "Moderate or redact a review",
        "Moderates (`published`, which also stamps `moderatedAt`), redacts (`title`/`body`: the current text with " +
          "spans replaced by `[redacted]`) or replaces `metadata`. Fires `review.updated` when the review changed."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("delete", "/reviews/:id", {
      params,
      payload: Reviews.ReviewDeletionRequest,
      success: Reviews.ReviewRecord,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Delete a review",
        "Permanently deletes the review with its files, answers and reply; keeps a deletion record with the reason " +
          "and actor. Answers the deleted review; fires `review.deleted`. To hide a review, unpublish it instead."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.post("createResponse", "/reviews/:id/response", {
      params,
      payload: Reviews.ReplyCreate,
      success: Reviews.ReviewReply.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequestResponse, NotFoundResponse, ConflictResponse]
    })
      .annotateMerge(doc(
        "Reply to a review",
        "Creates the review's reply: a draft unless `published` is true. A second reply is a 409."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.patch("updateResponse", "/reviews/:id/response", {
      params,
      payload: Reviews.ReplyPatch,
      success: Reviews.ReviewReply,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Edit a review's reply",
        "Edits, publishes or unpublishes the reply; only sent fields change."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("deleteResponse", "/reviews/:id/response", {
      params,
      success: Reviews.ReviewReply,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Delete a review's reply",
        "Deletes the reply and answers it; the review is untouched."
      ))
      .pipe(requires("reviews:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup("Reviews (write)", "Moderate, redact, delete, import reviews; manage replies."))
{}
