/**
 * The `Catalog` namespace of `@feedback/core`: what the catalog capability offers hosts and adapters.
 */
export * from "./Catalog.ts"
export * from "./CatalogImport.ts"
export * from "./CatalogLists.ts"
export * from "./CatalogRepository.ts"
export * from "./CatalogRequests.ts"
export * from "./Catalogs.ts"
export * from "./UnsubscribeRepository.ts"
export * from "./UnsubscribeToken.ts"
export * from "./Unsubscribes.ts"
