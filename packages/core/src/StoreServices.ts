/** Every store service the core's use-cases need: what a store adapter must provide (grows as capabilities land). */
import type { CatalogRepository } from "./CatalogRepository.ts"
import type { CursorKey, InstanceSecretRepository } from "./CursorKey.ts"
import type { EmailOutboxRepository } from "./EmailOutbox.ts"
import type { EventOutbox } from "./EventOutbox.ts"
import type { ProductQuestionRepository } from "./ProductQuestionRepository.ts"
import type { OrganizationRepository } from "./OrganizationRepository.ts"
import type { RateLimitStore } from "./RateLimitStore.ts"
import type { ReviewRepository } from "./ReviewRepository.ts"
import type { ReviewAutomationRepository } from "./ReviewAutomationRepository.ts"
import type { ReviewWriteRepository } from "./ReviewWriteRepository.ts"
import type { SecretKeyRepository } from "./SecretKeyRepository.ts"
import type { SetupRepository } from "./SetupRepository.ts"
import type { StorefrontRecordRepository } from "./StorefrontRecordRepository.ts"
import type { UnitOfWork } from "./UnitOfWork.ts"
import type { WebhookRepository } from "./WebhookRepository.ts"

export type StoreServices =
  | UnitOfWork
  | EventOutbox
  | ProductQuestionRepository | EmailOutboxRepository
  | OrganizationRepository
  | SecretKeyRepository
  | StorefrontRecordRepository
  | RateLimitStore
  | CatalogRepository
  | ReviewRepository
  | SetupRepository | ReviewAutomationRepository
  | WebhookRepository
  | ReviewWriteRepository
  | InstanceSecretRepository | CursorKey
