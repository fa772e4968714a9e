/** The API contract, importable by clients without any server code. */
export * from "./Api.ts"
export * from "./ErrorResponses.ts"
export * from "./OperatorApi.ts"
export * from "./OrganizationApi.ts"
export * from "./Security.ts"
export * from "./SetupApi.ts"
export * from "./SystemApi.ts"
export * from "./WebhooksApi.ts"
