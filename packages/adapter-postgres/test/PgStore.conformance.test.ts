import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgSetupTestSeed } from "./PgSetupTestSeed.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(storeName, freshLayer((target) => PgSetupTestSeed.pipe(Layer.provideMerge(PgStoreLayer(target)))).pipe((l) => l as never))
