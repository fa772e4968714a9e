export * from "./MemoryDatabase.ts"
export * from "./MemoryOrganizationStore.ts"
export * from "./MemoryStore.ts"
export * from "./MemoryRateLimitStore.ts"
