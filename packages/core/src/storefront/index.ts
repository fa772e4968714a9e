/**
 * The `Storefront` namespace of `@feedback/core`: what the storefront capability offers hosts and adapters.
 */
export * from "./ArrivalRules.ts"
export * from "./CustomerSignature.ts"
export * from "./Storefront.ts"
export * from "./StorefrontCaller.ts"
export * from "./StorefrontReads.ts"
export * from "./StorefrontRequests.ts"
export * from "./StorefrontReviews.ts"
export * from "./StorefrontRules.ts"
export * from "./StorefrontSubmissions.ts"
