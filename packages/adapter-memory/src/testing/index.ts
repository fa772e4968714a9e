export * from "./MemoryReviewSeed.ts"
