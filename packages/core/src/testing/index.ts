export * from "./StoreConformance.ts"
