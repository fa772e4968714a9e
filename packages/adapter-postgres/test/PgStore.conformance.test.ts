import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgReviewSeed } from "../src/testing/PgReviewSeed.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(storeName, freshLayer((target) => PgReviewSeed.pipe(Layer.provideMerge(PgStoreLayer(target)))).pipe((l) => l as never))
