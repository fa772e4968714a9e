import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemorySetupTestSeed } from "./MemorySetupTestSeed.ts"

runStoreConformance("memory", MemorySetupTestSeed.pipe(Layer.provideMerge(MemoryStoreLayer)))
