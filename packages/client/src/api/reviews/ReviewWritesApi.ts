/**
 * The review write side of the admin API (spec: Reviews): moderation and redaction, deletion, bulk moderation,
 * import, and the merchant's reply. Reading reviews (`GET /reviews`, `GET /reviews/{id}`) is another group.
 */
import {
  BulkUpdateBody,
  BulkUpdateResult,
  ImportRequest,
  ReviewImportResult,
  ReplyCreate,
  ReplyPatch,
  ReviewDeletionRequest,
  ReviewId,
  ReviewPatch,
  ReviewRecord,
  ReviewReply
} from "@feedback/core"
import { type Context, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  ConflictResponse,
  ImportFailedResponse,
  InvalidRedactionResponse,
  InvalidRequestResponse,
  NotFoundResponse
} from "../ErrorResponses.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

const params = { id: ReviewId }

/** The OpenAPI description of an endpoint. */
const describe = (options: { readonly summary: string; readonly description: string }) =>
<E extends { annotate<I, S>(key: Context.Key<I, S>, value: S): E }>(endpoint: E): E =>
  endpoint.annotate(OpenApi.Summary, options.summary).annotate(OpenApi.Description, options.description)

export class ReviewWritesApi extends HttpApiGroup.make("reviewWrites")
  .add(
    // Declared before `/reviews/:id` so the literal segment is never read as an id.
    HttpApiEndpoint.patch("bulkUpdate", "/reviews/bulk-update", {
      query: { filter: Schema.optionalKey(Schema.String), search: Schema.optionalKey(Schema.String) },
      payload: BulkUpdateBody,
      success: BulkUpdateResult,
      error: InvalidRequestResponse
    }).pipe(
      requires("reviews:write"),
      describe({
        summary: "Moderate reviews in bulk",
        description: "Publishes or rejects every review matching `filter` AND `search` (omitted: every review), stamping each moderated. " +
          "Answers how many matched; fires `review.updated` for each review whose `published` changed."
      })
    ),
    HttpApiEndpoint.post("import", "/reviews/import", {
      payload: ImportRequest,
      success: ReviewImportResult,
      error: [InvalidRequestResponse, ImportFailedResponse]
    }).pipe(
      requires("reviews:write"),
      describe({
        summary: "Import reviews",
        description: "Imports up to 10,000 reviews in one transaction. Rows whose product, site or externalId do not resolve " +
          "are skipped and listed, or with `strict` the first of them fails the import (422 IMPORT_FAILED, nothing imported)."
      })
    ),
    HttpApiEndpoint.patch("update", "/reviews/:id", {
      params,
      payload: ReviewPatch,
      success: ReviewRecord,
      error: [InvalidRequestResponse, NotFoundResponse, InvalidRedactionResponse]
    }).pipe(
      requires("reviews:write"),
      describe({
        summary: "Moderate or redact a review",
        description: "Moderates (`published`, which also stamps `moderatedAt`), redacts (`title`/`body`: the current text with " +
          "spans replaced by `[redacted]`) or replaces `metadata`. Fires `review.updated` when the review changed."
      })
    ),
    HttpApiEndpoint.delete("delete", "/reviews/:id", {
      params,
      payload: ReviewDeletionRequest,
      success: ReviewRecord,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(
      requires("reviews:write"),
      describe({
        summary: "Delete a review",
        description: "Permanently deletes the review with its files, answers and reply; keeps a deletion record with the reason " +
          "and actor. Answers the deleted review; fires `review.deleted`. To hide a review, unpublish it instead."
      })
    ),
    HttpApiEndpoint.post("createResponse", "/reviews/:id/response", {
      params,
      payload: ReplyCreate,
      success: ReviewReply.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequestResponse, NotFoundResponse, ConflictResponse]
    }).pipe(
      requires("reviews:write"),
      describe({ summary: "Reply to a review", description: "Creates the review's reply: a draft unless `published` is true. A second reply is a 409." })
    ),
    HttpApiEndpoint.patch("updateResponse", "/reviews/:id/response", {
      params,
      payload: ReplyPatch,
      success: ReviewReply,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:write"), describe({ summary: "Edit a review's reply", description: "Edits, publishes or unpublishes the reply; only sent fields change." })),
    HttpApiEndpoint.delete("deleteResponse", "/reviews/:id/response", {
      params,
      success: ReviewReply,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:write"), describe({ summary: "Delete a review's reply", description: "Deletes the reply and answers it; the review is untouched." }))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({ title: "Reviews (write)", description: "Moderate, redact, delete, import reviews; manage replies." }))
{}
