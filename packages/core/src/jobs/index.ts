/**
 * The `Jobs` namespace of `@feedback/core`: what the jobs capability offers hosts and adapters.
 */
export * from "./ExportErasure.ts"
export * from "./Job.ts"
export * from "./JobRepository.ts"
export * from "./JobRules.ts"
export * from "./Jobs.ts"
