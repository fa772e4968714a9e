export * from "@feedback/client/effect"
export * from "./server/index.ts"
