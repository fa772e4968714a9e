/**
 * Which store backs the server (docs/DECISIONS.md §10): `DATABASE_URL=postgres://…` a PostgreSQL server, `memory` the
 * in-memory store, unset the embedded PGlite in `DATA_DIR`. `RATE_LIMIT_URL=redis://…` moves only the rate limiter
 * to Redis, for request volumes one PostgreSQL should not carry (docs/DECISIONS.md §22).
 * Each store is an optional peer of this package (docs/DECISIONS.md §66), loaded only when chosen.
 */
import { Kernel, type StoreServices } from "@feedback/core"
import type { SqlError } from "effect/sql/SqlError"
import type { RedisError } from "effect/persistence/Redis"
import { Effect, Layer, Redacted } from "effect"
import { optionalPackage } from "./OptionalPackage.ts"

export type StoreChoice =
  | { readonly _tag: "Memory" }
  | { readonly _tag: "Server"; readonly url: string; readonly workSignals?: "notify" | "poll" | undefined }
  | { readonly _tag: "Embedded"; readonly dataDir: string }

export const chooseStore = (databaseUrl: string | undefined, dataDir: string): StoreChoice =>
  databaseUrl === undefined || databaseUrl === ""
    ? { _tag: "Embedded", dataDir }
    : databaseUrl === "memory"
    ? { _tag: "Memory" }
    : { _tag: "Server", url: databaseUrl }

export const describeStore = (choice: StoreChoice): string =>
  choice._tag === "Memory"
    ? "in memory (nothing survives a restart)"
    : choice._tag === "Embedded"
    ? `embedded PGlite in ${choice.dataDir}`
    : `PostgreSQL at ${redactUrl(choice.url)}`

const redactUrl = (url: string) => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(unparseable URL)"
  }
}

export interface StoreOptions {
  /** `CURSOR_SECRET`: seals list cursors instead of the key generated once and kept in the store. */
  readonly cursorSecret?: Redacted.Redacted<string> | undefined
  /** `RATE_LIMIT_URL`: a Redis server (`redis://…`, `rediss://…`) that keeps the token buckets instead of the store. */
  readonly rateLimitUrl?: Redacted.Redacted<string> | undefined
}

/** A limiter URL the server accepts: Redis, plain or over TLS. */
export const isRateLimitUrl = (url: string): boolean => {
  try {
    return ["redis:", "rediss:"].includes(new URL(url).protocol)
  } catch {
    return false
  }
}

export const describeRateLimitStore = (url: string | undefined): string =>
  url === undefined ? "in the store" : `Redis at ${redactUrl(url)}`

export const storeLayer = (
  choice: StoreChoice,
  options: StoreOptions = {}
): Layer.Layer<StoreServices | Kernel.IdGenerator, SqlError | RedisError> => {
  const store: Layer.Layer<StoreServices, SqlError> = choice._tag === "Memory"
    ? Layer.unwrap(
      optionalPackage("@feedback/adapter-memory", "DATABASE_URL=memory", () => import("@feedback/adapter-memory")).pipe(
        Effect.map((memory) => memory.MemoryStoreLayer)
      )
    )
    : Layer.unwrap(
      optionalPackage(
        "@feedback/adapter-postgres",
        choice._tag === "Embedded" ? "The embedded PGlite store" : "DATABASE_URL=postgres://…",
        () => import("@feedback/adapter-postgres")
      ).pipe(Effect.map((postgres) => postgres.PgStoreLayer(choice)))
    )
  // Merged after the store, the configured key replaces the store's generated one.
  const configured = options.cursorSecret === undefined
    ? Layer.empty
    : Kernel.CursorKey.layer(Redacted.value(options.cursorSecret))
  // Likewise a Redis limiter replaces the store's `RateLimitRepository`; every other service stays in the store.
  const limiter = options.rateLimitUrl === undefined
    ? Layer.empty
    : Layer.unwrap(
      optionalPackage("@feedback/adapter-redis", "RATE_LIMIT_URL", () => import("@feedback/adapter-redis")).pipe(
        Effect.map((redis) => redis.RedisRateLimitRepository.layer(Redacted.value(options.rateLimitUrl!)))
      )
    )
  return Layer.mergeAll(store, Kernel.IdGenerator.uuidV7, configured, limiter)
}
