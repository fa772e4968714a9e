/** Every core store service in memory, over one fresh MemoryDatabase (with its own generated cursor key). */
import { Kernel } from "@feedback/core"
import { Layer } from "effect"
import { MemoryCatalogRepository } from "./catalog/MemoryCatalogStore.ts"
import { MemoryOrderRepository } from "./orders/MemoryOrderStore.ts"
import { MemorySurveyRepository } from "./surveys/MemorySurveyStore.ts"
import { MemoryUnsubscribeRepository } from "./catalog/MemoryUnsubscribeStore.ts"
import { MemoryJobRepository } from "./jobs/MemoryJobStore.ts"
import { MemoryDatabase } from "./kernel/MemoryDatabase.ts"
import { MemoryIdempotencyRepository } from "./idempotency/MemoryIdempotencyStore.ts"
import { MemoryInstanceSecretRepository } from "./kernel/MemoryInstanceSecrets.ts"
import { MemoryStoreHealth } from "./kernel/MemoryStoreHealth.ts"
import { MemoryRateLimitRepository } from "./ratelimit/MemoryRateLimitStore.ts"
import { MemoryReviewRepository } from "./reviews/MemoryReviewStore.ts"
import { MemoryEmailOutboxRepository, MemoryProductQuestionRepository } from "./questions/MemoryProductQuestionStore.ts"
import { MemorySetupStore } from "./setup/MemorySetupStore.ts"
import { MemoryWebhookRepository } from "./webhooks/MemoryWebhookStore.ts"
import { MemoryReviewWriteRepository } from "./reviews/MemoryReviewWriteStore.ts"
import {
  MemoryCredentialChanges,
  MemoryEventOutbox,
  MemoryOrganizationRepository,
  MemorySecretKeyRepository,
  MemoryStorefrontRecordRepository,
  MemoryUnitOfWork
} from "./organizations/MemoryOrganizationStore.ts"

export const MemoryStoreLayer = Layer.mergeAll(
  MemoryUnitOfWork,
  MemoryEventOutbox,
  MemoryProductQuestionRepository,
  MemoryEmailOutboxRepository,
  MemoryOrganizationRepository,
  MemorySecretKeyRepository,
  MemoryCredentialChanges,
  MemoryStorefrontRecordRepository,
  MemoryRateLimitRepository,
  MemoryCatalogRepository,
  MemoryOrderRepository,
  MemorySurveyRepository,
  MemoryUnsubscribeRepository,
  MemoryReviewRepository,
  MemorySetupStore,
  MemoryWebhookRepository,
  MemoryReviewWriteRepository,
  MemoryJobRepository,
  MemoryStoreHealth,
  MemoryIdempotencyRepository,
  Kernel.CursorKey.layerStored.pipe(Layer.provideMerge(MemoryInstanceSecretRepository))
).pipe(Layer.provideMerge(MemoryDatabase.layer))
