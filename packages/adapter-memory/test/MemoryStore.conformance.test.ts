import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { MemoryReviewFixtures } from "./MemoryReviewFixtures.ts"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"

runStoreConformance("memory", MemoryReviewFixtures.pipe(Layer.provideMerge(MemoryStoreLayer)))
