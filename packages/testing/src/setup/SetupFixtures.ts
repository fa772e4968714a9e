/** The setup signals of an organization in which nothing is detected yet: tests turn on what their case needs. */
import type { Setup } from "@feedback/core"

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
