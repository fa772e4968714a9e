export * from "./AdminClient.ts"
