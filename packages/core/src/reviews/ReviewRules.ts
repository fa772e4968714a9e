/**
 * The pure rules of the review write side (docs/DECISIONS.md §5), as plain functions over data: what a PATCH does to a
 * review, what a reply PATCH does to a reply, and which import rows resolve. The use-cases (`ReviewWrites.ts`)
 * only load, call these and store.
 *
 * Choices made here where the spec and docs/DECISIONS.md are silent:
 * - Sending `published` is a moderation decision whatever its value, so it always stamps `moderatedAt` (rejecting a
 *   pending review sends `published: false` to an unpublished review, and must take it out of the pending state),
 *   exactly as bulk-update stamps every matched review.
 * - `review.updated` fires when the review's content or visibility changed: `published` changed, a redaction, or
 *   different metadata. A PATCH that only re-stamps `moderatedAt` is stored but announces nothing (the same rule as
 *   bulk-update, which fires only for reviews whose `published` changed). A PATCH that changes nothing at all (an
 *   empty body, unchanged text, equal metadata) writes nothing, keeps `updatedAt` and fires nothing.
 * - `redactedAt` is the time of the latest redaction; `originalTitle` / `originalBody` keep the first one's text.
 */
import { starOf } from "../catalog/Catalog.ts"
import { Result } from "effect"
import { ImportFailed, InvalidRedaction, InvalidRequest } from "../kernel/Errors.ts"
import type { ProductId, SiteId } from "../kernel/Ids.ts"
import type { Metadata } from "../kernel/Metadata.ts"
import { checkRedaction, REDACTION_MARKER } from "./Redaction.ts"
import type { ReviewRecord, ReviewReply } from "./Review.ts"
import {
  REVIEW_BODY_MAX_LENGTH,
  REVIEW_TITLE_MAX_LENGTH,
  type ReviewImportRow,
  type ReplyPatch,
  type ReviewPatch
} from "./ReviewRequests.ts"
import type { ImportReferences, ProductStatsDelta, ResolvedImportReferences } from "./ReviewWriteRepository.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

/** Whether two metadata objects hold the same pairs (key order is irrelevant). */
export const sameMetadata = (a: Metadata, b: Metadata): boolean => {
  const ak = Object.keys(a)
  if (ak.length !== Object.keys(b).length) return false
  return ak.every((k) => Object.hasOwn(b, k) && b[k] === a[k])
}

export interface ReviewPatchOutcome {
  /** The review after the PATCH (the current one when nothing changed). */
  readonly review: ReviewRecord
  /** Something must be stored (content, visibility, metadata or the moderation stamp). */
  readonly write: boolean
  /** `review.updated` fires. */
  readonly announce: boolean
  /** `published` changed: the product's stats change. */
  readonly publishedChanged: boolean
}

const redactedMaxLength = { title: REVIEW_TITLE_MAX_LENGTH, body: REVIEW_BODY_MAX_LENGTH } as const

/**
 * A redaction keeps a text within its limit (docs/DECISIONS.md §53): the result may be at most the field's limit, or
 * no longer than the current text when that is already longer (stored before the limits), so markers over many short
 * spans cannot grow a text past what any other write may store.
 */
export const redactedLengthProblem = (
  field: "title" | "body",
  current: string,
  proposed: string
): string | undefined => {
  const allowed = Math.max(redactedMaxLength[field], current.length)
  return proposed.length <= allowed
    ? undefined
    : `would be ${proposed.length} characters after redaction, over the limit of ${allowed}; redact fewer, wider spans (one ${REDACTION_MARKER} may cover several parts and the text between them)`
}

/** What `PATCH /reviews/{id}` does to `current` at time `at`, or why the redaction is refused. */
export const planReviewPatch = (
  current: ReviewRecord,
  patch: ReviewPatch,
  at: Timestamp
): Result.Result<ReviewPatchOutcome, InvalidRedaction | InvalidRequest> => {
  const redacts = { title: false, body: false }
  for (const field of ["title", "body"] as const) {
    const proposed = patch[field]
    if (proposed === undefined) continue
    const check = checkRedaction(current[field], proposed)
    if (Result.isFailure(check)) {
      return Result.fail(new InvalidRedaction({ message: `${field}: ${check.failure}`, field }))
    }
    const tooLong = check.success === "Redacted" ? redactedLengthProblem(field, current[field]!, proposed!) : undefined
    if (tooLong !== undefined) return Result.fail(InvalidRequest.single(`body.${field}`, tooLong))
    redacts[field] = check.success === "Redacted"
  }
  const redacted = redacts.title || redacts.body
  const moderated = patch.published !== undefined
  const publishedChanged = patch.published !== undefined && patch.published !== current.published
  const metadataChanged = patch.metadata !== undefined && !sameMetadata(current.metadata, patch.metadata)
  const announce = redacted || publishedChanged || metadataChanged
  const write = announce || moderated
  if (!write) return Result.succeed({ review: current, write, announce, publishedChanged })
  const firstRedaction = redacted && current.redactedAt === null
  const review: ReviewRecord = {
    ...current,
    title: redacts.title ? patch.title ?? null : current.title,
    body: redacts.body ? patch.body ?? null : current.body,
    originalTitle: firstRedaction ? current.title : current.originalTitle,
    originalBody: firstRedaction ? current.body : current.originalBody,
    redactedAt: redacted ? at : current.redactedAt,
    published: patch.published ?? current.published,
    moderatedAt: moderated ? at : current.moderatedAt,
    metadata: metadataChanged && patch.metadata !== undefined ? { ...patch.metadata } : current.metadata,
    updatedAt: at
  }
  return Result.succeed({ review, write, announce, publishedChanged })
}

/** What `PATCH /reviews/{id}/response` does: only sent fields change; `undefined` when nothing changes. */
export const planReplyPatch = (current: ReviewReply, patch: ReplyPatch, at: Timestamp): ReviewReply | undefined => {
  const next: ReviewReply = {
    ...current,
    body: patch.body ?? current.body,
    responderName: patch.responderName ?? current.responderName,
    published: patch.published ?? current.published,
    metadata: patch.metadata === undefined ? current.metadata : { ...patch.metadata }
  }
  const changed = next.body !== current.body || next.responderName !== current.responderName ||
    next.published !== current.published || !sameMetadata(next.metadata, current.metadata)
  return changed ? { ...next, updatedAt: at } : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Import

/** The distinct references of the rows, for one look-up per kind. */
export const importReferencesOf = (rows: ReadonlyArray<ReviewImportRow>): ImportReferences => {
  const distinct = (pick: (row: ReviewImportRow) => string | undefined) => {
    const set = new Set<string>()
    for (const row of rows) {
      const v = pick(row)
      if (v !== undefined) set.add(v)
    }
    return [...set]
  }
  return {
    siteIds: distinct((r) => r.site?.toLowerCase()),
    productSlugs: distinct((r) => r.product),
    productExternalIds: distinct((r) => r.productExternalId),
    productUrls: distinct((r) => r.productUrl),
    customerEmails: distinct((r) => r.customer?.toLowerCase()),
    reviewExternalIds: distinct((r) => r.externalId)
  }
}

export interface AcceptedRow {
  readonly index: number
  readonly row: ReviewImportRow
  readonly productId: ProductId
  readonly siteId: SiteId | null
}

export interface ImportSelection {
  readonly accepted: ReadonlyArray<AcceptedRow>
  readonly skipped: ReadonlyArray<{ readonly index: number; readonly message: string }>
}

const quote = (s: string) => JSON.stringify(s)

/**
 * The product a row names. References are tried in the order slug, productExternalId, productUrl; the first that
 * resolves wins. A URL shared by several products resolves to none of them (it would be a guess).
 */
const resolveProduct = (row: ReviewImportRow, refs: ResolvedImportReferences): Result.Result<ProductId, string> => {
  const tried: Array<string> = []
  if (row.product !== undefined) {
    const id = refs.productsBySlug.get(row.product)
    if (id !== undefined) return Result.succeed(id)
    tried.push(`slug ${quote(row.product)}`)
  }
  if (row.productExternalId !== undefined) {
    const id = refs.productsByExternalId.get(row.productExternalId)
    if (id !== undefined) return Result.succeed(id)
    tried.push(`productExternalId ${quote(row.productExternalId)}`)
  }
  if (row.productUrl !== undefined) {
    const ids = refs.productsByUrl.get(row.productUrl) ?? []
    if (ids.length === 1) return Result.succeed(ids[0]!)
    if (ids.length > 1 && tried.length === 0) {
      return Result.fail(
        `productUrl ${quote(row.productUrl)} belongs to several products; name the product by slug or productExternalId`
      )
    }
    tried.push(`url ${quote(row.productUrl)}`)
  }
  return Result.fail(`no product of this organization has ${tried.join(" or ")}`)
}

/**
 * Decides every row: imported, or skipped with the reason. A row fails on its product, then its site, then an
 * externalId that was imported before or that an earlier row of the same import already claimed. In strict mode
 * the first failing row fails the whole import (`ImportFailed`, nothing written).
 */
export const selectImportRows = (
  rows: ReadonlyArray<ReviewImportRow>,
  refs: ResolvedImportReferences,
  strict: boolean
): Result.Result<ImportSelection, ImportFailed> => {
  const accepted: Array<AcceptedRow> = []
  const skipped: Array<{ index: number; message: string }> = []
  const claimed = new Map<string, number>()
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!
    const product = resolveProduct(row, refs)
    let problem: string | undefined = Result.isFailure(product) ? product.failure : undefined
    const siteId = row.site === undefined ? null : row.site.toLowerCase() as SiteId
    if (problem === undefined && siteId !== null && !refs.siteIds.has(siteId)) {
      problem = `no site with id ${siteId} exists in this organization`
    }
    if (problem === undefined && row.externalId !== undefined) {
      const earlier = claimed.get(row.externalId)
      if (refs.importedExternalIds.has(row.externalId)) {
        problem = `a review with externalId ${quote(row.externalId)} was imported before`
      } else if (earlier !== undefined) {
        problem = `externalId ${quote(row.externalId)} repeats row ${earlier} of this import`
      }
    }
    if (problem !== undefined) {
      if (strict) {
        return Result.fail(
          new ImportFailed({ message: `Row ${index} cannot be imported: ${problem}; nothing was imported.`, index })
        )
      }
      skipped.push({ index, message: problem })
      continue
    }
    if (row.externalId !== undefined) claimed.set(row.externalId, index)
    accepted.push({ index, row, productId: Result.getOrThrow(product), siteId })
  }
  return Result.succeed({ accepted, skipped })
}

const contentTypes: Readonly<Record<string, string>> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  heic: "image/heic",
  svg: "image/svg+xml",
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm"
}

/** What an imported image URL says about the file: its name and a content type guessed from the extension. */
export const fileFromUrl = (url: string): { readonly fileName: string; readonly contentType: string } => {
  const path = new URL(url).pathname
  const last = path.slice(path.lastIndexOf("/") + 1)
  let fileName = last
  try {
    const decoded = decodeURIComponent(last)
    // %00 would decode to NUL, which text columns cannot hold; such a name stays encoded.
    if (!decoded.includes("\u0000")) fileName = decoded
  } catch {
    // Not valid percent-encoded UTF-8: keep the raw segment.
  }
  if (fileName === "") fileName = "image"
  const dot = fileName.lastIndexOf(".")
  const extension = dot < 0 ? "" : fileName.slice(dot + 1).toLowerCase()
  return { fileName, contentType: contentTypes[extension] ?? "application/octet-stream" }
}

/** What new reviews add to their products' stats, one delta per product in order of first appearance. */
export const productStatsDeltas = (
  reviews: Iterable<Pick<ReviewRecord, "productId" | "published" | "rating">>
): ReadonlyArray<ProductStatsDelta> => {
  const deltas = new Map<ProductId, {
    productId: ProductId
    reviews: number
    published: number
    publishedRatingSum: number
    publishedByStar: [number, number, number, number, number]
  }>()
  for (const review of reviews) {
    let delta = deltas.get(review.productId)
    if (delta === undefined) {
      delta = {
        productId: review.productId,
        reviews: 0,
        published: 0,
        publishedRatingSum: 0,
        publishedByStar: [0, 0, 0, 0, 0]
      }
      deltas.set(review.productId, delta)
    }
    delta.reviews++
    if (review.published) {
      delta.published++
      delta.publishedRatingSum += review.rating
      delta.publishedByStar[starOf(review.rating) - 1]!++
    }
  }
  return [...deltas.values()]
}
