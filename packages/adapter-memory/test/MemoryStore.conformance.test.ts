import { runStoreConformance } from "@feedback/testing"
import { Layer } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryStoreTestKit } from "../src/testing/MemoryStoreTestKit.ts"

runStoreConformance("memory", MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer)))
