import { runStoreConformance } from "@feedback/core/testing"
import { Layer } from "effect"
import { PgReviewFixtures } from "./PgReviewFixtures.ts"
import { PgStoreLayer } from "../src/PgStore.ts"
import { PgReviewSeed } from "../src/testing/PgReviewSeed.ts"
import { PgQuestionTestSeed } from "./PgQuestionTestSeed.ts"
import { PgSetupTestSeed } from "./PgSetupTestSeed.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

runStoreConformance(
  storeName,
  freshLayer((target) =>
    Layer.mergeAll(
      PgSetupTestSeed,
      PgQuestionTestSeed,
      PgReviewFixtures,
      PgReviewSeed
    ).pipe(Layer.provideMerge(PgStoreLayer(target)))
  ).pipe((l) => l as never)
)
