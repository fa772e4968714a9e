/** Every core store service in memory, over one fresh MemoryDatabase. */
import { Layer } from "effect"
import { MemoryCatalogRepository } from "./MemoryCatalogStore.ts"
import { MemoryDatabase } from "./MemoryDatabase.ts"
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
  MemoryReviewWriteRepository
).pipe(Layer.provideMerge(MemoryDatabase.layer))
