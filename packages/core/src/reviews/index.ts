/**
 * The `Reviews` namespace of `@feedback/core`: what the reviews capability offers hosts and adapters.
 */
export * from "./Redaction.ts"
export * from "./Review.ts"
export * from "./ReviewLists.ts"
export * from "./ReviewRepository.ts"
export * from "./ReviewRequests.ts"
export * from "./ReviewRules.ts"
export * from "./ReviewWriteRepository.ts"
export * from "./ReviewWrites.ts"
export * from "./Reviews.ts"
