export * from "./MemoryStoreTestKit.ts"
