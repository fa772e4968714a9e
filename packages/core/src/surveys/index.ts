/**
 * The `Surveys` namespace of `@feedback/core`: what the surveys capability offers hosts and adapters.
 */
export * from "./Survey.ts"
export * from "./SurveyEnrolment.ts"
export * from "./SurveyRepository.ts"
export * from "./SurveyRequests.ts"
export * from "./SurveyRules.ts"
export * from "./SurveySending.ts"
export * from "./Surveys.ts"
