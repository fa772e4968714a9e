/**
 * The email outbox (docs/DECISIONS.md §6): a notice to send is recorded in the same unit of work as the change that calls
 * for it, so it exists exactly when that change committed; a background worker (`EmailNoticeWorker.ts`) sends it
 * after commit, off the request path.
 *
 * Life of a notice:
 * - `pending`: committed, not yet handed to the mail transport (or waiting to retry after the transport said for
 *   certain that it did not take the message). A pending notice is sent after any crash or restart.
 * - `sending`: claimed by one worker immediately before the transport is called; no other worker can claim it.
 * - `sent` (the transport accepted it), `logged` (no transport is configured: the message was written to the log
 *   instead), `failed` (refused for good, retries used up, or interrupted; `error` says which). Final.
 *
 * A worker that dies between claiming and recording the outcome leaves the notice `sending`; once the claim is older
 * than any send can take, recovery marks it `failed` ("interrupted") instead of sending it again: the transport may
 * already have accepted it, and a notice is never sent twice (at most once in that window).
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { type OrganizationId, type ProductQuestionAnswerId, type ProductQuestionId, Uuid } from "../kernel/Ids.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

export const EmailNoticeId = Uuid.pipe(Schema.brand("EmailNoticeId"))
export type EmailNoticeId = typeof EmailNoticeId.Type

export const EmailNoticeStatus = Schema.Literals(["pending", "sending", "sent", "logged", "failed"])
export type EmailNoticeStatus = typeof EmailNoticeStatus.Type

/** One email to send: the rendered message, so later edits of the records it came from do not change it. */
export interface EmailNotice {
  readonly id: EmailNoticeId
  readonly organizationId: OrganizationId
  readonly productQuestionId: ProductQuestionId
  readonly productQuestionAnswerId: ProductQuestionAnswerId
  readonly recipient: string
  readonly subject: string
  readonly text: string
  readonly status: EmailNoticeStatus
  /** Calls of the transport so far. */
  readonly attempts: number
  /** A pending notice is not claimed before this time (retry back-off). */
  readonly nextAttemptAt: Timestamp
  readonly claimedBy: string | null
  readonly claimedAt: Timestamp | null
  readonly error: string | null
  readonly createdAt: Timestamp
  /** When it reached a final status. */
  readonly finishedAt: Timestamp | null
}

/** What a worker records after calling the transport. */
export type NoticeCompletion =
  | { readonly status: "sent" | "logged" | "failed"; readonly error: string | null; readonly at: Timestamp }
  | { readonly status: "pending"; readonly error: string; readonly at: Timestamp; readonly nextAttemptAt: Timestamp }

export class EmailOutboxRepository extends Context.Service<EmailOutboxRepository, {
  /**
   * Records a pending notice; must run inside the unit of work of the change it announces. At most one notice
   * exists per question (the asker is emailed once): a second is ignored and `false` returned.
   */
  readonly enqueue: (notice: EmailNotice) => Effect.Effect<boolean>
  /**
   * Atomically moves the oldest due pending notice (`nextAttemptAt <= at`) to `sending` for `workerId`, counting
   * the attempt, and returns it. Commits on its own, before the transport is called. Concurrent workers never
   * claim the same notice.
   */
  readonly claimNext: (workerId: string, at: Timestamp) => Effect.Effect<Option.Option<EmailNotice>>
  /**
   * Records the outcome of a claimed notice, only while it is still `sending` for `workerId` (false otherwise: it
   * was recovered as interrupted, or deleted with its question).
   */
  readonly complete: (
    organizationId: OrganizationId,
    id: EmailNoticeId,
    workerId: string,
    completion: NoticeCompletion
  ) => Effect.Effect<boolean>
  /** Marks `sending` notices claimed before `claimedBefore` as `failed` ("interrupted"); returns how many. */
  readonly failInterrupted: (claimedBefore: Timestamp, at: Timestamp, error: string) => Effect.Effect<number>
  /** Deletes every notice about the question (it is being deleted: no copy of the address may stay). */
  readonly deleteForQuestion: (
    organizationId: OrganizationId,
    productQuestionId: ProductQuestionId
  ) => Effect.Effect<number>
  /** The organization's notices, oldest first (diagnostics and tests). */
  readonly listForOrganization: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<EmailNotice>>
}>()("feedback/EmailOutboxRepository") {}
