/** Every core store service over PostgreSQL, with migrations applied when the layer is built. */
import { CursorKey } from "@feedback/core"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/index.ts"
import { runMigrations } from "./Migrations.ts"
import { PgDatabase, type DatabaseTarget } from "./PgDatabase.ts"
import { PgCatalogRepository } from "./PgCatalogStore.ts"
import { PgInstanceSecretRepository } from "./PgInstanceSecrets.ts"
import { PgRateLimitStore } from "./PgRateLimitStore.ts"
import { PgReviewRepository } from "./PgReviewStore.ts"
import { PgEmailOutboxRepository, PgProductQuestionRepository } from "./PgProductQuestionStore.ts"
import { PgSetupStore } from "./PgSetupStore.ts"
import { PgWebhookRepository } from "./PgWebhookStore.ts"
import { PgReviewWriteRepository } from "./PgReviewWriteStore.ts"
import {
  PgEventOutbox,
  PgOrganizationRepository,
  PgSecretKeyRepository,
  PgStorefrontRecordRepository,
  PgUnitOfWork
} from "./PgOrganizationStore.ts"

const Migrated = Layer.effectDiscard(runMigrations(migrations).pipe(Effect.orDie))

/** The store services over an existing SqlClient (so a host can share its own pool). */
export const PgStoreServices = Layer.mergeAll(
  PgUnitOfWork,
  PgEventOutbox,
  PgProductQuestionRepository, PgEmailOutboxRepository,
  PgOrganizationRepository,
  PgSecretKeyRepository,
  PgStorefrontRecordRepository,
  PgRateLimitStore,
  PgCatalogRepository,
  PgReviewRepository,
  PgSetupStore,
  PgWebhookRepository,
  PgReviewWriteRepository,
  // The generated cursor key is read (or stored, by the first process) once per layer build.
  CursorKey.layerStored.pipe(Layer.provideMerge(PgInstanceSecretRepository))
).pipe(Layer.provideMerge(Migrated))

/** The store services with their own connection to `target`. */
export const PgStoreLayer = (target: DatabaseTarget) =>
  PgStoreServices.pipe(Layer.provideMerge(PgDatabase(target)))
