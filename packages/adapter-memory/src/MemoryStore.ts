/** Every core store service in memory, over one fresh MemoryDatabase (with its own generated cursor key). */
import { CursorKey } from "@feedback/core"
import { Layer } from "effect"
import { MemoryCatalogRepository } from "./MemoryCatalogStore.ts"
import { MemoryDatabase } from "./MemoryDatabase.ts"
import { MemoryInstanceSecretRepository } from "./MemoryInstanceSecrets.ts"
import { MemoryRateLimitStore } from "./MemoryRateLimitStore.ts"
import { MemoryReviewRepository } from "./MemoryReviewStore.ts"
import { MemoryEmailOutboxRepository, MemoryProductQuestionRepository } from "./MemoryProductQuestionStore.ts"
import { MemorySetupStore } from "./MemorySetupStore.ts"
import { MemoryWebhookRepository } from "./MemoryWebhookStore.ts"
import { MemoryReviewWriteRepository } from "./MemoryReviewWriteStore.ts"
import {
  MemoryEventOutbox,
  MemoryOrganizationRepository,
  MemorySecretKeyRepository,
  MemoryStorefrontRecordRepository,
  MemoryUnitOfWork
} from "./MemoryOrganizationStore.ts"

export const MemoryStoreLayer = Layer.mergeAll(
  MemoryUnitOfWork,
  MemoryEventOutbox,
  MemoryProductQuestionRepository, MemoryEmailOutboxRepository,
  MemoryOrganizationRepository,
  MemorySecretKeyRepository,
  MemoryStorefrontRecordRepository,
  MemoryRateLimitStore,
  MemoryCatalogRepository,
  MemoryReviewRepository,
  MemorySetupStore,
  MemoryWebhookRepository,
  MemoryReviewWriteRepository,
  CursorKey.layerStored.pipe(Layer.provideMerge(MemoryInstanceSecretRepository))
).pipe(Layer.provideMerge(MemoryDatabase.layer))
