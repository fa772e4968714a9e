export * from "./PgTestSupport.ts"
