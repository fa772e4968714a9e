/**
 * The `Orders` namespace of `@feedback/core`: what the orders capability offers hosts and adapters.
 */
export * from "./Order.ts"
export * from "./OrderRepository.ts"
export * from "./OrderRequests.ts"
export * from "./OrderRules.ts"
export * from "./Orders.ts"
