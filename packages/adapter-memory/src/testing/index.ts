export * from "./MemoryTestSupport.ts"
