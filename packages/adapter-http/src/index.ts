export * from "./api/index.ts"
export * from "./client/index.ts"
export * from "./server/index.ts"
