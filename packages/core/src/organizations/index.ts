/**
 * The `Organizations` namespace of `@feedback/core`: what the organizations capability offers hosts and adapters.
 */
export * as AuthenticationCache from "./AuthenticationCache.ts"
export * from "./Authenticated.ts"
export * from "./CredentialChanges.ts"
export * from "./Organization.ts"
export * from "./OrganizationRepository.ts"
export * from "./Organizations.ts"
export * from "./SecretKey.ts"
export * from "./SecretKeyRepository.ts"
export * from "./StorefrontRecordRepository.ts"
export * from "./StorefrontRecords.ts"
