import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgStoreTestKit } from "../src/testing/PgStoreTestKit.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(
  storeName,
  freshLayer((target) => PgStoreTestKit.pipe(Layer.provideMerge(PgStoreLayer(target)))).pipe((l) => l as never)
)
