import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryTestSupport } from "../src/testing/MemoryTestSupport.ts"

runStoreConformance("memory", MemoryTestSupport.pipe(Layer.provideMerge(MemoryStoreLayer)))
