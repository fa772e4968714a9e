/**
 * The whole conformance suite on the PostgreSQL server of TEST_DATABASE_URL (when set) and, always, on embedded
 * PGlite: the two differ in more than speed (one connection, and a rate limiter whose levels live in the process).
 */
import { runStoreConformance } from "@feedback/testing"
import { Effect, Layer } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgStoreTestKit } from "../src/testing/PgStoreTestKit.ts"
import { freshEmbeddedTarget, freshLayer, serverUrl, storeName } from "./TestDatabase.ts"

const storeOn = (target: Parameters<typeof PgStoreLayer>[0]) =>
  PgStoreTestKit.pipe(Layer.provideMerge(PgStoreLayer(target)))

runStoreConformance(storeName, freshLayer(storeOn).pipe((l) => l as never))

if (serverUrl !== undefined) {
  runStoreConformance("embedded PGlite", Layer.unwrap(Effect.map(freshEmbeddedTarget, storeOn)).pipe((l) => l as never))
}
