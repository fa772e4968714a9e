import { Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { noSetupSignals as noSignals } from "@feedback/testing"
import {
  type Area,
  type AreaDecisions,
  type ConfiguredAreas,
  type SetupDecisions,
  type SetupOutcome,
  type SetupSignals,
  applyOutcome,
  areaStatus,
  areas,
  configuredAreas,
  decide,
  emptyAreaDecisions,
  emptySetupDecisions,
  observe,
  observeArea,
  resolveSetup,
  SetupPatch,
  SetupState,
  setupOutcomes
} from "../src/setup/SetupRules.ts"
import { fromMillis, type Timestamp } from "../src/kernel/Timestamp.ts"

const T0 = Date.parse("2026-01-01T00:00:00.000Z")
const at = (offsetMillis: number): Timestamp => fromMillis(T0 + offsetMillis)

const signals = (on: Partial<SetupSignals>): SetupSignals => ({ ...noSignals, ...on })
const configured = (on: ReadonlyArray<Area>): ConfiguredAreas => ({
  reviews: on.includes("reviews"),
  loyalty: on.includes("loyalty"),
  wishlists: on.includes("wishlists"),
  site: on.includes("site")
})

const input = (s: SetupSignals, decisions: SetupDecisions) => ({
  signals: s,
  decisions,
  publishableKey: null,
  embedScriptUrl: "https://cdn.example.test/widgets.js",
  apiBaseUrl: "https://api.example.test"
})

describe("configuredAreas (docs/DECISIONS.md §8)", () => {
  const rows: ReadonlyArray<readonly [string, Partial<SetupSignals>, ReadonlyArray<Area>]> = [
    ["nothing", {}, []],
    ["an active survey flow", { hasActiveSurveyFlow: true }, ["reviews"]],
    ["a review", { hasReview: true }, ["reviews"]],
    ["a flow and a review", { hasActiveSurveyFlow: true, hasReview: true }, ["reviews"]],
    ["a loyalty program not on a site", { hasLoyaltyProgram: true }, []],
    ["loyaltyProgramOnSite alone", { loyaltyProgramOnSite: true }, []],
    ["a loyalty program on a site", { hasLoyaltyProgram: true, loyaltyProgramOnSite: true }, ["loyalty"]],
    ["a wishlist", { hasWishlist: true }, ["wishlists"]],
    ["a site without a publishable key", { hasSite: true }, []],
    ["a publishable key without a site", { hasPublishableKey: true }, []],
    ["a site and a publishable key", { hasSite: true, hasPublishableKey: true }, ["site"]],
    ["an integration and products only", { hasIntegration: true, hasProducts: true }, []],
    ["everything", {
      hasSite: true,
      hasPublishableKey: true,
      hasIntegration: true,
      hasProducts: true,
      hasActiveSurveyFlow: true,
      hasReview: true,
      hasLoyaltyProgram: true,
      loyaltyProgramOnSite: true,
      hasWishlist: true
    }, ["reviews", "loyalty", "wishlists", "site"]]
  ]
  it.each(rows)("%s", (_name, on, expected) => {
    expect(configuredAreas(signals(on))).toEqual(configured(expected))
  })

  it("hasIntegration and hasProducts never configure an area", () => {
    fc.assert(fc.property(arbSignals, (s) => {
      const flipped = { ...s, hasIntegration: !s.hasIntegration, hasProducts: !s.hasProducts }
      expect(configuredAreas(flipped)).toEqual(configuredAreas(s))
    }))
  })
})

describe("applyOutcome", () => {
  it("sets only the outcome's own timestamp", () => {
    expect(applyOutcome(emptyAreaDecisions, "completed", at(1))).toEqual({ ...emptyAreaDecisions, completedAt: at(1) })
    expect(applyOutcome(emptyAreaDecisions, "dismissed", at(1))).toEqual({ ...emptyAreaDecisions, dismissedAt: at(1) })
    expect(applyOutcome(emptyAreaDecisions, "widgetBannerDismissed", at(1)))
      .toEqual({ ...emptyAreaDecisions, widgetBannerDismissedAt: at(1) })
    expect(applyOutcome(emptyAreaDecisions, "widgetHintDismissed", at(1)))
      .toEqual({ ...emptyAreaDecisions, widgetHintDismissedAt: at(1) })
  })

  it("keeps the first timestamp when repeated", () => {
    const once = applyOutcome(emptyAreaDecisions, "dismissed", at(1))
    const twice = applyOutcome(once, "dismissed", at(2))
    expect(twice.dismissedAt).toBe(at(1))
    expect(twice).toBe(once)
  })

  it("widget banner and hint do not settle the area", () => {
    const d = applyOutcome(
      applyOutcome(emptyAreaDecisions, "widgetBannerDismissed", at(1)),
      "widgetHintDismissed",
      at(2)
    )
    expect(areaStatus(d, false).needsSetup).toBe(true)
    expect(areaStatus(applyOutcome(d, "completed", at(3)), false).needsSetup).toBe(false)
  })

  it("decide leaves other areas untouched", () => {
    const next = decide(emptySetupDecisions, "loyalty", "completed", at(1))
    expect(next.loyalty.completedAt).toBe(at(1))
    expect(next.reviews).toBe(emptySetupDecisions.reviews)
    expect(next.wishlists).toEqual(emptyAreaDecisions)
    expect(next.site).toEqual(emptyAreaDecisions)
  })
})

describe("observe and areaStatus", () => {
  it("records a configured area as completed the first time it is seen, and never again", () => {
    const first = observe(emptySetupDecisions, configured(["reviews"]), at(1))
    expect(first.changed).toBe(true)
    expect(first.decisions.reviews.completedAt).toBe(at(1))
    expect(first.decisions.loyalty).toEqual(emptyAreaDecisions)
    const second = observe(first.decisions, configured(["reviews"]), at(2))
    expect(second.changed).toBe(false)
    expect(second.decisions).toBe(first.decisions)
    const stopped = observe(second.decisions, configured([]), at(3))
    expect(stopped.changed).toBe(false)
    expect(stopped.decisions.reviews.completedAt).toBe(at(1))
  })

  it("does not overwrite a completedAt set by the merchant", () => {
    const d = applyOutcome(emptyAreaDecisions, "completed", at(1))
    expect(observeArea(d, true, at(2)).completedAt).toBe(at(1))
  })

  it("needsSetup follows the formula", () => {
    expect(areaStatus(emptyAreaDecisions, false).needsSetup).toBe(true)
    expect(areaStatus(emptyAreaDecisions, true).needsSetup).toBe(false)
    expect(areaStatus({ ...emptyAreaDecisions, completedAt: at(1) }, false).needsSetup).toBe(false)
    expect(areaStatus({ ...emptyAreaDecisions, dismissedAt: at(1) }, false).needsSetup).toBe(false)
    expect(
      areaStatus({ ...emptyAreaDecisions, widgetBannerDismissedAt: at(1), widgetHintDismissedAt: at(1) }, false)
        .needsSetup
    ).toBe(true)
  })

  it("rule 2 needs observation: an area that ran and stopped stays settled only once observed", () => {
    // Unobserved, areaStatus only reflects today's signals: this is why resolveSetup observes first.
    expect(areaStatus(emptyAreaDecisions, false).needsSetup).toBe(true)
    const running = resolveSetup(input(signals({ hasReview: true }), emptySetupDecisions), at(1))
    expect(running.state.areas.reviews).toEqual({
      ...emptyAreaDecisions,
      completedAt: at(1),
      configured: true,
      needsSetup: false
    })
    const stopped = resolveSetup(input(noSignals, running.decisions), at(2))
    expect(stopped.changed).toBe(false)
    expect(stopped.state.areas.reviews).toEqual({
      ...emptyAreaDecisions,
      completedAt: at(1),
      configured: false,
      needsSetup: false
    })
  })

  it("resolveSetup answers the spec's Setup state shape", () => {
    const r = resolveSetup(
      { ...input(signals({ hasSite: true }), emptySetupDecisions), publishableKey: "pk_test_1" },
      at(1)
    )
    const decoded = Schema.decodeUnknownSync(SetupState)(r.state, { onExcessProperty: "error" })
    expect(decoded).toEqual(r.state)
    expect(Object.keys(r.state).sort()).toEqual(["apiBaseUrl", "areas", "embedScriptUrl", "publishableKey", "signals"])
    expect(Object.keys(r.state.areas).sort()).toEqual(["loyalty", "reviews", "site", "wishlists"])
    expect(Object.keys(r.state.areas.site).sort()).toEqual([
      "completedAt",
      "configured",
      "dismissedAt",
      "needsSetup",
      "widgetBannerDismissedAt",
      "widgetHintDismissedAt"
    ])
    expect(r.state.publishableKey).toBe("pk_test_1")
    expect(r.changed).toBe(false)
  })

  it("SetupPatch accepts the spec's enums only", () => {
    expect(Schema.decodeUnknownSync(SetupPatch)({ area: "site", outcome: "dismissed" }))
      .toEqual({ area: "site", outcome: "dismissed" })
    expect(() => Schema.decodeUnknownSync(SetupPatch)({ area: "shop", outcome: "dismissed" })).toThrow()
    expect(() => Schema.decodeUnknownSync(SetupPatch)({ area: "site", outcome: "skipped" })).toThrow()
    expect(() => Schema.decodeUnknownSync(SetupPatch)({ area: "site" })).toThrow()
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Property: random sequences of outcomes, signal changes and observations against a reference model
// ---------------------------------------------------------------------------------------------------------------

// Signals lean towards false so that areas are often unconfigured, and settle in every possible way.
const arbFlag = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 2, arbitrary: fc.constant(true) })
const arbSignals: fc.Arbitrary<SetupSignals> = fc.record({
  hasSite: arbFlag,
  hasPublishableKey: arbFlag,
  hasIntegration: arbFlag,
  hasProducts: arbFlag,
  hasActiveSurveyFlow: arbFlag,
  hasReview: arbFlag,
  hasLoyaltyProgram: arbFlag,
  loyaltyProgramOnSite: arbFlag,
  hasWishlist: arbFlag
})

type Op =
  | { readonly _tag: "Outcome"; readonly area: Area; readonly outcome: SetupOutcome; readonly dt: number }
  | { readonly _tag: "Signals"; readonly signals: SetupSignals }
  | { readonly _tag: "Observe"; readonly dt: number }

const arbDt = fc.integer({ min: 1, max: 86_400_000 })
const arbOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    _tag: fc.constant("Outcome" as const),
    area: fc.constantFrom(...areas),
    outcome: fc.constantFrom(...setupOutcomes),
    dt: arbDt
  }),
  fc.record({ _tag: fc.constant("Signals" as const), signals: arbSignals }),
  fc.record({ _tag: fc.constant("Observe" as const), dt: arbDt })
)

const arbOps = fc.array(arbOp, { maxLength: 60, size: "max" })

/** What the spec says should have happened to one area, built without the module's rules. */
interface AreaModel {
  firstOutcomeAt: Partial<Record<SetupOutcome, Timestamp>>
  firstSeenConfiguredAt: Timestamp | null
  /** needsSetup has been false in some answer. */
  settledInAnswer: boolean
  /** The first completedAt ever stored. */
  storedCompletedAt: Timestamp | null
}

const expectedDecisions = (m: AreaModel): AreaDecisions => {
  const candidates = [m.firstOutcomeAt.completed, m.firstSeenConfiguredAt ?? undefined]
    .filter((t): t is Timestamp => t !== undefined)
    .sort()
  return {
    completedAt: candidates[0] ?? null,
    dismissedAt: m.firstOutcomeAt.dismissed ?? null,
    widgetBannerDismissedAt: m.firstOutcomeAt.widgetBannerDismissed ?? null,
    widgetHintDismissedAt: m.firstOutcomeAt.widgetHintDismissed ?? null
  }
}

/** How often the property met the cases that make it meaningful (checked after the run, so it cannot be vacuous). */
const coverage = {
  settledByObservation: 0,
  settledThenStoppedRunning: 0,
  widgetOutcomeWhileUnsettled: 0,
  repeatedOutcome: 0,
  settledByOutcome: 0
}

const DECISION_FIELDS = ["completedAt", "dismissedAt", "widgetBannerDismissedAt", "widgetHintDismissedAt"] as const

const runSequence = (initialSignals: SetupSignals, ops: ReadonlyArray<Op>): void => {
  let sig = initialSignals
  let stored: SetupDecisions = emptySetupDecisions
  let clock = 0
  const model = Object.fromEntries(areas.map((a): [Area, AreaModel] => [a, {
    firstOutcomeAt: {},
    firstSeenConfiguredAt: null,
    settledInAnswer: false,
    storedCompletedAt: null
  }])) as Record<Area, AreaModel>

  // An answer of GET or PATCH: observe, persist, and check what the merchant sees.
  const answer = (decisions: SetupDecisions, now: Timestamp): void => {
    const conf = configuredAreas(sig)
    const r = resolveSetup(input(sig, decisions), now)
    for (const a of areas) {
      // Observing one area depends on that area alone.
      expect(r.decisions[a]).toEqual(observeArea(decisions[a], conf[a], now))
      if (conf[a] && model[a].firstSeenConfiguredAt === null) model[a].firstSeenConfiguredAt = now
    }
    expect(r.changed).toBe(areas.some((a) => r.decisions[a] !== decisions[a]))
    stored = r.decisions
    for (const a of areas) {
      const m = model[a]
      const status = r.state.areas[a]
      expect(status.configured).toBe(conf[a])
      for (const f of DECISION_FIELDS) expect(status[f]).toBe(stored[a][f])
      // needsSetup never returns to true once false.
      if (m.settledInAnswer) expect(status.needsSetup).toBe(false)
      if (
        m.settledInAnswer && !status.configured && m.firstOutcomeAt.completed === undefined &&
        m.firstOutcomeAt.dismissed === undefined
      ) coverage.settledThenStoppedRunning++
      if (
        !m.settledInAnswer && conf[a] && m.firstOutcomeAt.completed === undefined &&
        m.firstOutcomeAt.dismissed === undefined
      ) coverage.settledByObservation++
      const everSettled = m.firstOutcomeAt.completed !== undefined || m.firstOutcomeAt.dismissed !== undefined ||
        m.firstSeenConfiguredAt !== null
      expect(status.needsSetup).toBe(!everSettled)
      if (!status.needsSetup) m.settledInAnswer = true
    }
  }

  for (const op of ops) {
    const before = stored
    switch (op._tag) {
      case "Signals": {
        sig = op.signals
        break
      }
      case "Observe": {
        clock += op.dt
        answer(stored, at(clock))
        break
      }
      case "Outcome": {
        clock += op.dt
        const now = at(clock)
        const next = decide(stored, op.area, op.outcome, now)
        // Areas are independent: nothing but the named area changes.
        for (const a of areas) if (a !== op.area) expect(next[a]).toBe(before[a])
        // The outcome touches its own field only; banner and hint never settle the area.
        const ownField = {
          completed: "completedAt",
          dismissed: "dismissedAt",
          widgetBannerDismissed: "widgetBannerDismissedAt",
          widgetHintDismissed: "widgetHintDismissedAt"
        }[op.outcome]
        for (const f of DECISION_FIELDS) if (f !== ownField) expect(next[op.area][f]).toBe(before[op.area][f])
        if (op.outcome === "widgetBannerDismissed" || op.outcome === "widgetHintDismissed") {
          for (const c of [true, false]) {
            expect(areaStatus(next[op.area], c).needsSetup).toBe(areaStatus(before[op.area], c).needsSetup)
          }
        }
        const wasNeeded = areaStatus(before[op.area], configuredAreas(sig)[op.area]).needsSetup
        if (model[op.area].firstOutcomeAt[op.outcome] !== undefined) coverage.repeatedOutcome++
        else if (wasNeeded && op.outcome !== "widgetBannerDismissed" && op.outcome !== "widgetHintDismissed") {
          coverage.settledByOutcome++
        }
        if (wasNeeded && (op.outcome === "widgetBannerDismissed" || op.outcome === "widgetHintDismissed")) {
          coverage.widgetOutcomeWhileUnsettled++
        }
        model[op.area].firstOutcomeAt[op.outcome] ??= now
        answer(next, now)
        break
      }
    }
    for (const a of areas) {
      const m = model[a]
      // Each timestamp is the first occurrence; completedAt is the earlier of "completed" and "first seen running".
      expect(stored[a]).toEqual(expectedDecisions(m))
      // completedAt is never cleared or changed once set.
      if (m.storedCompletedAt !== null) expect(stored[a].completedAt).toBe(m.storedCompletedAt)
      m.storedCompletedAt = stored[a].completedAt
    }
  }
}

describe("setup rules over random histories", () => {
  it("hold for every sequence of outcomes, signal changes and observations", () => {
    fc.assert(
      fc.property(arbSignals, arbOps, (initial, ops) => runSequence(initial, ops)),
      { numRuns: 500 }
    )
    // The histories above met every case that could break the rules, often.
    for (const [name, count] of Object.entries(coverage)) expect(count, name).toBeGreaterThan(100)
  })
})
