import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgTestSupport } from "../src/testing/PgTestSupport.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(storeName, freshLayer((target) => PgTestSupport.pipe(Layer.provideMerge(PgStoreLayer(target)))).pipe((l) => l as never))
