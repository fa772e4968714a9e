/** Setup fixtures: an organization in which nothing is detected or decided yet. */
import type { Setup } from "@feedback/core"

/** The setup signals of an organization in which nothing is detected yet: tests turn on what their case needs. */
export const noSetupSignals: Setup.SetupSignals = {
  hasSite: false,
  hasPublishableKey: false,
  hasIntegration: false,
  hasProducts: false,
  hasActiveSurveyFlow: false,
  hasReview: false,
  hasLoyaltyProgram: false,
  loyaltyProgramOnSite: false,
  hasWishlist: false
}

/** An area's status before anything is detected or decided in it. */
export const untouchedArea: Setup.AreaStatus = {
  completedAt: null,
  dismissedAt: null,
  widgetBannerDismissedAt: null,
  widgetHintDismissedAt: null,
  configured: false,
  needsSetup: true
}
