/**
 * How a shopper's review arrives (shared §18, docs/DECISIONS.md §57): the facts gathered about it are judged by a table
 * of flag rules, each `{code, detail, score}` when it fires, and the review settings (§49) decide whether an unflagged
 * review is published at once. Plain functions over data, so each rule is tested without a store.
 */
import type { Flag } from "../reviews/Review.ts"
import type { ReviewSettings } from "../setup/ReviewSettings.ts"

/** The documented thresholds of the arrival rules. */
export const arrivalThresholds = {
  /** Other reviews of the organization from the same IP address at which `ip_collision` fires. */
  ipCollisions: 3,
  /** Other reviews of the organization from the same browser fingerprint at which `fingerprint_collision` fires. */
  fingerprintCollisions: 3,
  /** A form sent back sooner than this many seconds after it was rendered is `too_fast`. */
  minSubmitSeconds: 5,
  /** The newest reviews of the same email and of the same fingerprint that `duplicate` compares the text with. */
  duplicateWindow: 50
} as const

/** What is known about a review when it arrives, before it is stored. */
export interface ArrivalFacts {
  /** Another review with the same text from the same customer (email) or browser fingerprint, if any. */
  readonly duplicateOf: string | null
  /** Other reviews of the organization from the same IP address (the submission's own siblings excluded). */
  readonly sameIpAddress: number
  /** Other reviews of the organization from the same browser fingerprint (0 without one). */
  readonly sameFingerprint: number
  /** Seconds between the form's rendering and its submission; null when the form did not say. */
  readonly submitSeconds: number | null
}

interface FlagRule {
  readonly code: string
  /** The detail and score when the rule fires, else undefined. Scores are 1 at the rule's threshold. */
  readonly judge: (facts: ArrivalFacts) => { readonly detail: string; readonly score: number } | undefined
}

const t = arrivalThresholds

/** The rules, in the order their flags are listed. */
export const arrivalFlagRules: ReadonlyArray<FlagRule> = [
  {
    code: "duplicate",
    judge: (f) =>
      f.duplicateOf === null
        ? undefined
        : { detail: `same text as review ${f.duplicateOf} from the same email or browser`, score: 1 }
  },
  {
    code: "ip_collision",
    judge: (f) =>
      f.sameIpAddress < t.ipCollisions ? undefined : {
        detail: `${f.sameIpAddress} other reviews came from the same IP address`,
        score: f.sameIpAddress / t.ipCollisions
      }
  },
  {
    code: "fingerprint_collision",
    judge: (f) =>
      f.sameFingerprint < t.fingerprintCollisions ? undefined : {
        detail: `${f.sameFingerprint} other reviews came from the same browser fingerprint`,
        score: f.sameFingerprint / t.fingerprintCollisions
      }
  },
  {
    code: "too_fast",
    judge: (f) =>
      f.submitSeconds === null || f.submitSeconds >= t.minSubmitSeconds ? undefined : {
        detail: `sent ${f.submitSeconds} s after the form was shown (under ${t.minSubmitSeconds} s)`,
        score: (t.minSubmitSeconds - f.submitSeconds) / t.minSubmitSeconds
      }
  }
]

/** The flags the facts raise, in rule order. */
export const arrivalFlags = (facts: ArrivalFacts): ReadonlyArray<Flag> =>
  arrivalFlagRules.flatMap((rule) => {
    const verdict = rule.judge(facts)
    return verdict === undefined ? [] : [{ code: rule.code, ...verdict }]
  })

/**
 * Whether a review arrives published: with `autoPublish` on, an unflagged review of at least `autoPublishMinRating`
 * (and of a verified buyer when `autoPublishVerifiedOnly`); otherwise it waits in the moderation queue.
 */
export const publishedOnArrival = (
  settings: ReviewSettings,
  review: { readonly rating: number; readonly verifiedBuyer: boolean; readonly flagged: boolean }
): boolean =>
  settings.autoPublish && !review.flagged && review.rating >= settings.autoPublishMinRating &&
  (!settings.autoPublishVerifiedOnly || review.verifiedBuyer)

/**
 * Seconds from the form's rendering to `at` (millisecond precision), never negative: a browser clock ahead of the
 * server's counts as an instant submission. Null without `formRenderedAt`.
 */
export const submitSecondsOf = (formRenderedAtMillis: number | undefined, atMillis: number): number | null =>
  formRenderedAtMillis === undefined ? null : Math.max(0, atMillis - formRenderedAtMillis) / 1_000

/** The text two reviews are compared by for `duplicate`: title and body, case and runs of white space ignored. */
export const comparableText = (review: { readonly title: string | null; readonly body: string | null }): string =>
  [review.title ?? "", review.body ?? ""].map((s) => s.trim().replace(/\s+/g, " ").toLowerCase()).join("\n")

/** A review with no text is never a duplicate (a rating alone says nothing twice). */
export const hasText = (review: { readonly title: string | null; readonly body: string | null }): boolean =>
  comparableText(review) !== "\n"

/** A customer's name from the one name a shopper gave: the first word, and the rest as the last name. */
export const splitAuthorName = (
  authorName: string
): { readonly firstName: string | null; readonly lastName: string | null } => {
  const words = authorName.trim().split(/\s+/).filter((w) => w !== "")
  return { firstName: words[0] ?? null, lastName: words.length > 1 ? words.slice(1).join(" ") : null }
}

/** A `User-Agent` as stored: at most this many characters. */
export const USER_AGENT_MAX_LENGTH = 1_000
