import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { MemoryReviewFixtures } from "./MemoryReviewFixtures.ts"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryReviewSeed } from "../src/testing/MemoryReviewSeed.ts"
import { MemoryQuestionTestSeed } from "./MemoryQuestionTestSeed.ts"
import { MemorySetupTestSeed } from "./MemorySetupTestSeed.ts"

runStoreConformance(
  "memory",
  Layer.mergeAll(
    MemorySetupTestSeed,
    MemoryQuestionTestSeed,
    MemoryReviewFixtures,
    MemoryReviewSeed
  ).pipe(Layer.provideMerge(MemoryStoreLayer))
)
