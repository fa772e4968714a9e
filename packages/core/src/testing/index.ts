export * from "./StoreConformance.ts"
export * from "./ReviewFixtures.ts"
