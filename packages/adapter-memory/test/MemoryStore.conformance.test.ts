import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryReviewSeed } from "../src/testing/MemoryReviewSeed.ts"

runStoreConformance("memory", MemoryReviewSeed.pipe(Layer.provideMerge(MemoryStoreLayer)))
