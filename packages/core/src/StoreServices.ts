/** Every store service the core's use-cases need: what a store adapter must provide (grows as capabilities land). */
import type { CatalogRepository } from "./CatalogRepository.ts"
import type { EventOutbox } from "./EventOutbox.ts"
import type { OrganizationRepository } from "./OrganizationRepository.ts"
import type { RateLimitStore } from "./RateLimitStore.ts"
import type { ReviewRepository } from "./ReviewRepository.ts"
import type { SecretKeyRepository } from "./SecretKeyRepository.ts"
import type { StorefrontRecordRepository } from "./StorefrontRecordRepository.ts"
import type { UnitOfWork } from "./UnitOfWork.ts"

export type StoreServices =
  | UnitOfWork
  | EventOutbox
  | OrganizationRepository
  | SecretKeyRepository
  | StorefrontRecordRepository
  | RateLimitStore
  | CatalogRepository
  | ReviewRepository
