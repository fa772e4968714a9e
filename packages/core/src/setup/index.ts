/**
 * The `Setup` namespace of `@feedback/core`: what the setup capability offers hosts and adapters.
 */
export * from "./AutomationRequests.ts"
export * from "./AutomationRules.ts"
export * from "./EmailTemplates.ts"
export * from "./ReviewAutomation.ts"
export * from "./ReviewAutomationRepository.ts"
export * from "./ReviewSettings.ts"
export * from "./ReviewsSetupPlan.ts"
export * from "./Setup.ts"
export * from "./SetupConfig.ts"
export * from "./SetupRepository.ts"
export * from "./SetupRules.ts"
