/**
 * `@feedback/client`: the typed fetch client (this entry; depends only on `openapi-fetch`). The Effect contract and
 * the Effect client are at `@feedback/client/effect` (they need `effect` and `@feedback/core` installed beside it).
 */
export * from "./fetch/AdminApiClient.ts"
