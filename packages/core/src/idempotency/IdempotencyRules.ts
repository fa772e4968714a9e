/**
 * The pure rules of idempotent retries (docs/DECISIONS.md §18, shared §13): which keys are acceptable, what makes two
 * requests "the same", which outcomes are recorded, and what a stored key means for a new request with it.
 */
import { createHash } from "node:crypto"
import { Result } from "effect"
import { InvalidRequest } from "../kernel/Errors.ts"
import { redactData, type Redaction } from "../kernel/EventOutbox.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key"
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed"
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255
/** A recorded outcome is answered for 24 hours after the first request; then the key may be used afresh. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/**
 * How long a claim blocks repeats (409) before another request may take it over: longer than any request runs. A
 * takeover is safe even then, because the first request's result is recorded only if it still holds the claim.
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000

/** The methods whose requests accept a key (reads are idempotent already). */
export const idempotentMethods: ReadonlySet<string> = new Set(["POST", "PATCH", "DELETE"])

// 0x20..0x7E: printable ASCII, space included (HTTP trims it at the ends of a field anyway).
const printableAscii = /^[\x20-\x7E]+$/

/**
 * The key of a request's `Idempotency-Key` field: absent → `undefined` (the request runs as usual); 1..255 printable
 * ASCII → the key; anything else → a 400 naming the header.
 */
export const parseIdempotencyKey = (raw: string | undefined): Result.Result<string | undefined, InvalidRequest> => {
  if (raw === undefined) return Result.succeed(undefined)
  if (raw.length === 0 || raw.length > MAX_IDEMPOTENCY_KEY_LENGTH || !printableAscii.test(raw)) {
    return Result.fail(InvalidRequest.single(
      "headers.idempotency-key",
      `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, such as a UUID`
    ))
  }
  return Result.succeed(raw)
}

/**
 * What identifies a request for its key: method, target (path with query string) and body bytes, hashed. A method
 * or request target never contains a newline, so the separator keeps the parts apart.
 */
export const requestFingerprint = (method: string, target: string, body: Uint8Array): string =>
  createHash("sha256").update(method.toUpperCase()).update("\n").update(target).update("\n").update(body).digest("hex")

/**
 * An outcome decided by the operation is recorded: a success, or a 404/409/422 that a retry would meet again. 400,
 * 401, 403, 429 and 5xx are not, so the client may fix or wait and retry with the same key.
 */
export const isRecordedStatus = (status: number): boolean =>
  (status >= 200 && status < 300) || status === 404 || status === 409 || status === 422

/** A recorded answer: status, media type and body text (the API's bodies are JSON or empty). */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string | null
  readonly body: string
}

/** A key as a store holds it. `response` is null while the claiming request runs. */
export interface IdempotencyRecord {
  readonly fingerprint: string
  readonly token: string
  readonly leaseUntil: Timestamp
  readonly expiresAt: Timestamp
  readonly response: StoredResponse | null
}

/** A request's claim of its key: `token` identifies this attempt; times are the `Clock`'s. */
export interface IdempotencyClaim {
  readonly organizationId: string
  readonly key: string
  readonly fingerprint: string
  readonly token: string
  readonly now: Timestamp
  readonly leaseUntil: Timestamp
  readonly expiresAt: Timestamp
}

export type ClaimOutcome =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Reused" }

/**
 * What a stored key means for a claim (every store decides exactly this, atomically): none or expired → the claim
 * takes it; another request's fingerprint → reused; recorded → replay; running within its lease → in progress;
 * running past its lease (its process died) → the claim takes it over.
 */
export const decideClaim = (stored: IdempotencyRecord | undefined, claim: IdempotencyClaim): ClaimOutcome => {
  if (stored === undefined || stored.expiresAt <= claim.now) return { _tag: "Claimed" }
  if (stored.fingerprint !== claim.fingerprint) return { _tag: "Reused" }
  if (stored.response !== null) return { _tag: "Replay", response: stored.response }
  return stored.leaseUntil <= claim.now ? { _tag: "Claimed" } : { _tag: "InProgress" }
}

/**
 * A recorded response with an erased record's fields set to null (docs/DECISIONS.md §18: erasure reaches recorded
 * responses too). Only a body that is the record itself (a JSON object whose `id` is the record's) is touched; its
 * other bytes stay as they were, like a redacted delivery body.
 */
export const redactStoredResponse = (response: StoredResponse, redaction: Redaction): StoredResponse => {
  if (!response.body.includes(redaction.recordId)) return response
  let parsed: unknown
  try {
    parsed = JSON.parse(response.body)
  } catch {
    return response
  }
  if (
    typeof parsed !== "object" || parsed === null || (parsed as { readonly id?: unknown }).id !== redaction.recordId
  ) return response
  const redacted = redactData(parsed, redaction.fields)
  return redacted === parsed ? response : { ...response, body: JSON.stringify(redacted) }
}
