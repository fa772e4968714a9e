/** Every store service the core's use-cases need: what a store adapter must provide (grows as capabilities land). */
import type { CatalogRepository } from "./catalog/CatalogRepository.ts"
import type { UnsubscribeRepository } from "./catalog/UnsubscribeRepository.ts"
import type { CursorKey, InstanceSecretRepository } from "./kernel/CursorKey.ts"
import type { EmailOutboxRepository } from "./questions/EmailOutbox.ts"
import type { EventOutbox } from "./kernel/EventOutbox.ts"
import type { IdempotencyRepository } from "./idempotency/IdempotencyRepository.ts"
import type { ProductQuestionRepository } from "./questions/ProductQuestionRepository.ts"
import type { JobRepository } from "./jobs/JobRepository.ts"
import type { OrderRepository } from "./orders/OrderRepository.ts"
import type { OrganizationRepository } from "./organizations/OrganizationRepository.ts"
import type { RateLimitRepository } from "./ratelimit/RateLimitRepository.ts"
import type { SurveyRepository } from "./surveys/SurveyRepository.ts"
import type { ReviewRepository } from "./reviews/ReviewRepository.ts"
import type { ReviewAutomationRepository } from "./setup/ReviewAutomationRepository.ts"
import type { ReviewWriteRepository } from "./reviews/ReviewWriteRepository.ts"
import type { SecretKeyRepository } from "./organizations/SecretKeyRepository.ts"
import type { SetupRepository } from "./setup/SetupRepository.ts"
import type { StorefrontRecordRepository } from "./organizations/StorefrontRecordRepository.ts"
import type { StoreHealth } from "./kernel/StoreHealth.ts"
import type { UnitOfWork } from "./kernel/UnitOfWork.ts"
import type { WebhookRepository } from "./webhooks/WebhookRepository.ts"

export type StoreServices =
  | UnitOfWork
  | EventOutbox
  | ProductQuestionRepository
  | EmailOutboxRepository
  | OrganizationRepository
  | SecretKeyRepository
  | StorefrontRecordRepository
  | RateLimitRepository
  | CatalogRepository
  | OrderRepository
  | SurveyRepository
  | UnsubscribeRepository
  | ReviewRepository
  | SetupRepository
  | ReviewAutomationRepository
  | WebhookRepository
  | ReviewWriteRepository
  | JobRepository
  | InstanceSecretRepository
  | CursorKey
  | StoreHealth
  | IdempotencyRepository
