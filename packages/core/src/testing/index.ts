export * from "./StoreConformance.ts"
export * from "./ReviewSeed.ts"
