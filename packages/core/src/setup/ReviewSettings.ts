/**
 * Review settings (shared DECISIONS §17; docs/DECISIONS.md §49): one record per organization, the one
 * place the auto-publish preference lives. The guided setup writes `autoPublish` and `autoPublishMinRating`;
 * `PATCH /review-settings` any of the three. An organization that never saved any reads the defaults.
 */
import { Schema } from "effect"

const Rating = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 5 })))

export const ReviewSettings = Schema.Struct({
  /** Publish a new review without moderation when it passes the two rules below. */
  autoPublish: Schema.Boolean,
  /** The lowest rating (1..5) published automatically. */
  autoPublishMinRating: Rating,
  /** Publish automatically only reviews of verified buyers. */
  autoPublishVerifiedOnly: Schema.Boolean
}).annotate({ identifier: "ReviewSettings" })
export type ReviewSettings = typeof ReviewSettings.Type

/**
 * Off, as the guided setup's own default; when switched on, 4 stars and up (the setup's default threshold) from any
 * reviewer, so switching `autoPublish` alone does what a merchant expects.
 */
export const defaultReviewSettings: ReviewSettings = {
  autoPublish: false,
  autoPublishMinRating: 4,
  autoPublishVerifiedOnly: false
}

/** Body of PATCH /review-settings: only sent fields change. */
export const ReviewSettingsPatch = Schema.Struct({
  autoPublish: Schema.optionalKey(Schema.Boolean),
  autoPublishMinRating: Schema.optionalKey(Rating),
  autoPublishVerifiedOnly: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ReviewSettingsPatch" })
export type ReviewSettingsPatch = typeof ReviewSettingsPatch.Type

/** The settings after a patch; only sent fields change. */
export const patchReviewSettings = (current: ReviewSettings, patch: ReviewSettingsPatch): ReviewSettings => ({
  autoPublish: patch.autoPublish ?? current.autoPublish,
  autoPublishMinRating: patch.autoPublishMinRating ?? current.autoPublishMinRating,
  autoPublishVerifiedOnly: patch.autoPublishVerifiedOnly ?? current.autoPublishVerifiedOnly
})

export const sameReviewSettings = (a: ReviewSettings, b: ReviewSettings): boolean =>
  a.autoPublish === b.autoPublish && a.autoPublishMinRating === b.autoPublishMinRating &&
  a.autoPublishVerifiedOnly === b.autoPublishVerifiedOnly
