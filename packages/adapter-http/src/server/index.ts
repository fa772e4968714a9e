export * from "./ApiServer.ts"
export * from "./DemoSeed.ts"
export * from "./StoreSelection.ts"
export { DEFAULT_EMBED_SCRIPT_URL } from "./SetupHandlers.ts"
