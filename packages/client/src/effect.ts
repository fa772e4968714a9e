/**
 * The Admin API contract as Effect `HttpApi` groups and the typed Effect client derived from it.
 * Importing this entry pulls no store or server code: only `effect` and the models of `@feedback/core`.
 */
export * from "./api/index.ts"
export * from "./AdminClient.ts"
export * from "./OperatorClient.ts"
