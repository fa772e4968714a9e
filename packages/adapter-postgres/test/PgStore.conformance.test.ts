import { runStoreConformance } from "@feedback/core/testing"
import { PgStoreLayer } from "../src/PgStore.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(storeName, freshLayer(PgStoreLayer).pipe((l) => l as never))
