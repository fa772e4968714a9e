/**
 * Which store backs the server (docs/DECISIONS.md §10): `DATABASE_URL=postgres://…` a PostgreSQL server, `memory` the
 * in-memory store, unset the embedded PGlite in `DATA_DIR`.
 */
import { CursorKey, IdGenerator, type StoreServices } from "@feedback/core"
import type { SqlError } from "effect/sql/SqlError"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Layer, Redacted } from "effect"

export type StoreChoice =
  | { readonly _tag: "Memory" }
  | { readonly _tag: "Server"; readonly url: string }
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
}

export const storeLayer = (choice: StoreChoice, options: StoreOptions = {}): Layer.Layer<StoreServices | IdGenerator, SqlError> => {
  const store: Layer.Layer<StoreServices, SqlError> = choice._tag === "Memory" ? MemoryStoreLayer : PgStoreLayer(choice)
  // Merged after the store, the configured key replaces the store's generated one.
  const configured = options.cursorSecret === undefined ? Layer.empty : CursorKey.layer(Redacted.value(options.cursorSecret))
  return Layer.mergeAll(store, IdGenerator.uuidV7, configured)
}
