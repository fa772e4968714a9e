/**
 * Organization setup (spec "Setup state", "Area status", "States and transitions"; docs/DECISIONS.md §8) as data and pure
 * functions. Storage keeps one `AreaDecisions` per area (`SetupDecisions`); signals are read fresh from the
 * organization's records on every request. Nothing here reads a clock: callers pass `now`.
 *
 * Order of a request, for GET and PATCH alike:
 *   1. load `SetupDecisions` and read `SetupSignals`;
 *   2. (PATCH only) `decide(decisions, area, outcome, now)`;
 *   3. `resolveSetup({ signals, decisions, ... }, now)`, persist `decisions` when `changed`, answer `state`.
 * Steps 2 and 3 commute (outcomes and observation only ever fill nulls, each its own field), so a store may
 * run them in either order.
 */
import { Schema } from "effect"
import { Timestamp } from "../kernel/Timestamp.ts"

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

/** The nine booleans read from the organization's records. */
export const SetupSignals = Schema.Struct({
  hasSite: Schema.Boolean,
  hasPublishableKey: Schema.Boolean,
  hasIntegration: Schema.Boolean,
  hasProducts: Schema.Boolean,
  hasActiveSurveyFlow: Schema.Boolean,
  hasReview: Schema.Boolean,
  hasLoyaltyProgram: Schema.Boolean,
  loyaltyProgramOnSite: Schema.Boolean,
  hasWishlist: Schema.Boolean
})
export type SetupSignals = typeof SetupSignals.Type

export const Area = Schema.Literals(["reviews", "loyalty", "wishlists", "site"])
export type Area = typeof Area.Type
/** Every area, in the spec's order. */
export const areas: ReadonlyArray<Area> = Area.literals

export const SetupOutcome = Schema.Literals(["completed", "dismissed", "widgetBannerDismissed", "widgetHintDismissed"])
export type SetupOutcome = typeof SetupOutcome.Type
export const setupOutcomes: ReadonlyArray<SetupOutcome> = SetupOutcome.literals

/** What is stored per area: the merchant's decisions and the first time the area was seen running. */
export const AreaDecisions = Schema.Struct({
  completedAt: Schema.NullOr(Timestamp),
  dismissedAt: Schema.NullOr(Timestamp),
  widgetBannerDismissedAt: Schema.NullOr(Timestamp),
  widgetHintDismissedAt: Schema.NullOr(Timestamp)
})
export type AreaDecisions = typeof AreaDecisions.Type

/** Stored decisions of one organization, one entry per area. */
export const SetupDecisions = Schema.Struct({
  reviews: AreaDecisions,
  loyalty: AreaDecisions,
  wishlists: AreaDecisions,
  site: AreaDecisions
})
export type SetupDecisions = typeof SetupDecisions.Type

/** The spec's Area status: the stored decisions plus two derived booleans. */
export const AreaStatus = Schema.Struct({
  ...AreaDecisions.fields,
  configured: Schema.Boolean,
  needsSetup: Schema.Boolean
})
export type AreaStatus = typeof AreaStatus.Type

export const SetupAreas = Schema.Struct({
  reviews: AreaStatus,
  loyalty: AreaStatus,
  wishlists: AreaStatus,
  site: AreaStatus
})
export type SetupAreas = typeof SetupAreas.Type

/** The spec's Setup state, the response of every setup endpoint. */
export const SetupState = Schema.Struct({
  signals: SetupSignals,
  areas: SetupAreas,
  publishableKey: Schema.NullOr(Schema.String),
  embedScriptUrl: Schema.String,
  apiBaseUrl: Schema.String
}).annotate({ identifier: "SetupState" })
export type SetupState = typeof SetupState.Type

/** Body of PATCH /organization/setup. */
export const SetupPatch = Schema.Struct({ area: Area, outcome: SetupOutcome }).annotate({ identifier: "SetupPatch" })
export type SetupPatch = typeof SetupPatch.Type

// ---------------------------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------------------------

export type ConfiguredAreas = { readonly [A in Area]: boolean }

/** docs/DECISIONS.md §8: when an area's records say it is already running. */
const configuredWhen: { readonly [A in Area]: (signals: SetupSignals) => boolean } = {
  reviews: (s) => s.hasActiveSurveyFlow || s.hasReview,
  loyalty: (s) => s.hasLoyaltyProgram && s.loyaltyProgramOnSite,
  wishlists: (s) => s.hasWishlist,
  site: (s) => s.hasSite && s.hasPublishableKey
}

/** The decision field each outcome stamps. */
export const outcomeField = {
  completed: "completedAt",
  dismissed: "dismissedAt",
  widgetBannerDismissed: "widgetBannerDismissedAt",
  widgetHintDismissed: "widgetHintDismissedAt"
} as const satisfies { readonly [O in SetupOutcome]: keyof AreaDecisions }

// ---------------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------------

export const emptyAreaDecisions: AreaDecisions = {
  completedAt: null,
  dismissedAt: null,
  widgetBannerDismissedAt: null,
  widgetHintDismissedAt: null
}

/** Decisions of an organization that has decided nothing and was never observed. */
export const emptySetupDecisions: SetupDecisions = {
  reviews: emptyAreaDecisions,
  loyalty: emptyAreaDecisions,
  wishlists: emptyAreaDecisions,
  site: emptyAreaDecisions
}

const mapAreas = <A>(f: (area: Area) => A): { readonly [K in Area]: A } => ({
  reviews: f("reviews"),
  loyalty: f("loyalty"),
  wishlists: f("wishlists"),
  site: f("site")
})

export const configuredAreas = (signals: SetupSignals): ConfiguredAreas =>
  mapAreas((area) => configuredWhen[area](signals))

/**
 * Records an outcome on one area. Every outcome is irreversible and idempotent: it fills its own timestamp only
 * while that is null, so repeating it keeps the first time, and it never touches another field (a later
 * `dismissed` on a completed area records dismissedAt too, but changes nothing the merchant sees: needsSetup is
 * already false). Returns the same object when nothing changes.
 */
export const applyOutcome = (decisions: AreaDecisions, outcome: SetupOutcome, now: Timestamp): AreaDecisions => {
  const field = outcomeField[outcome]
  return decisions[field] === null ? { ...decisions, [field]: now } : decisions
}

/** PATCH /organization/setup on the stored decisions of an organization; other areas are returned untouched. */
export const decide = (
  decisions: SetupDecisions,
  area: Area,
  outcome: SetupOutcome,
  now: Timestamp
): SetupDecisions => {
  const next = applyOutcome(decisions[area], outcome, now)
  return next === decisions[area] ? decisions : { ...decisions, [area]: next }
}

/** Rule 1 on one area: seen running for the first time → completedAt. Never clears anything. */
export const observeArea = (decisions: AreaDecisions, configured: boolean, now: Timestamp): AreaDecisions =>
  configured && decisions.completedAt === null ? { ...decisions, completedAt: now } : decisions

/**
 * Rule 1 on every area. `changed` tells the store whether there is anything to persist; an observation that
 * changed something must be persisted, or completedAt would move to the time of the next read.
 */
export const observe = (
  decisions: SetupDecisions,
  configured: ConfiguredAreas,
  now: Timestamp
): { readonly decisions: SetupDecisions; readonly changed: boolean } => {
  const next = mapAreas((area) => observeArea(decisions[area], configured[area], now))
  const changed = areas.some((area) => next[area] !== decisions[area])
  return changed ? { decisions: next, changed } : { decisions, changed }
}

/**
 * The Area status of one area. Rule 2 (needsSetup false for good once completed, dismissed or configured) holds
 * only for decisions that have been through `observe` with the same `configured`: observing turns "configured"
 * into a permanent completedAt, which is what keeps needsSetup false after the area stops running (a survey flow
 * switched off, a loyalty program detached). Called on unobserved decisions it merely reflects the current signals.
 */
export const areaStatus = (decisions: AreaDecisions, configured: boolean): AreaStatus => ({
  completedAt: decisions.completedAt,
  dismissedAt: decisions.dismissedAt,
  widgetBannerDismissedAt: decisions.widgetBannerDismissedAt,
  widgetHintDismissedAt: decisions.widgetHintDismissedAt,
  configured,
  needsSetup: decisions.completedAt === null && decisions.dismissedAt === null && !configured
})

export interface SetupInput {
  readonly signals: SetupSignals
  /** The stored decisions, after any outcome of this request has been applied with `decide`. */
  readonly decisions: SetupDecisions
  readonly publishableKey: string | null
  readonly embedScriptUrl: string
  readonly apiBaseUrl: string
}

export interface SetupResolution {
  /** The response body. */
  readonly state: SetupState
  /** The decisions to store (observed). */
  readonly decisions: SetupDecisions
  /** True when `decisions` differs from the input and must be persisted. */
  readonly changed: boolean
}

/**
 * Assembles the Setup state. It observes first (so rule 2 holds in every answer) and hands back the observed
 * decisions for the store to persist.
 */
export const resolveSetup = (input: SetupInput, now: Timestamp): SetupResolution => {
  const configured = configuredAreas(input.signals)
  const observed = observe(input.decisions, configured, now)
  return {
    state: setupState({ ...input, decisions: observed.decisions }, configured),
    decisions: observed.decisions,
    changed: observed.changed
  }
}

/**
 * Assembles the Setup state from decisions that have already been observed (see `areaStatus`). Prefer
 * `resolveSetup`, which observes and so cannot be called out of order.
 */
export const setupState = (
  input: SetupInput,
  configured: ConfiguredAreas = configuredAreas(input.signals)
): SetupState => ({
  signals: input.signals,
  areas: mapAreas((area) => areaStatus(input.decisions[area], configured[area])),
  publishableKey: input.publishableKey,
  embedScriptUrl: input.embedScriptUrl,
  apiBaseUrl: input.apiBaseUrl
})
