export * from "./PgReviewSeed.ts"
export * from "./ReviewDataset.ts"
