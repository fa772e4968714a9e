export * from "./PgStoreTestKit.ts"
export * from "./ReviewDataset.ts"
