export * from "./StoreConformance.ts"
export * from "./SetupTestSeed.ts"
