/**
 * The `Idempotency` namespace of `@feedback/core`: what the idempotency capability offers hosts and adapters.
 */
export * from "./Idempotency.ts"
export * from "./IdempotencyRepository.ts"
export * from "./IdempotencyRules.ts"
