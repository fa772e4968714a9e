/** Every core store service over PostgreSQL, with migrations applied when the layer is built. */
import { CursorKey } from "@feedback/core"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/index.ts"
import { runMigrations } from "./kernel/Migrations.ts"
import { PgDatabase, type DatabaseTarget } from "./kernel/PgDatabase.ts"
import { PgCatalogRepository } from "./catalog/PgCatalogStore.ts"
import { PgInstanceSecretRepository } from "./kernel/PgInstanceSecrets.ts"
import { PgStoreHealth } from "./kernel/PgStoreHealth.ts"
import { PgWorkSignals } from "./kernel/PgWorkSignals.ts"
import { PgIdempotencyStore } from "./idempotency/PgIdempotencyStore.ts"
import { PgRateLimitStore } from "./ratelimit/PgRateLimitStore.ts"
import { PgReviewRepository } from "./reviews/PgReviewStore.ts"
import { PgEmailOutboxRepository, PgProductQuestionRepository } from "./questions/PgProductQuestionStore.ts"
import { PgSetupStore } from "./setup/PgSetupStore.ts"
import { PgWebhookRepository } from "./webhooks/PgWebhookStore.ts"
import { PgJobRepository } from "./jobs/PgJobStore.ts"
import { PgReviewWriteRepository } from "./reviews/PgReviewWriteStore.ts"
import {
  PgEventOutbox,
  PgOrganizationRepository,
  PgSecretKeyRepository,
  PgStorefrontRecordRepository,
  PgUnitOfWork
} from "./organizations/PgOrganizationStore.ts"

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
  PgJobRepository,
  PgStoreHealth,
  PgIdempotencyStore,
  // The generated cursor key is read (or stored, by the first process) once per layer build.
  CursorKey.layerStored.pipe(Layer.provideMerge(PgInstanceSecretRepository))
).pipe(Layer.provideMerge(Migrated))

/**
 * The store services with their own connection to `target`. On a server, idle background workers wait for the
 * database's notifications (`PgWorkSignals`); embedded PGlite keeps polling in process.
 */
export const PgStoreLayer = (target: DatabaseTarget) =>
  (target._tag === "Server" && target.workSignals !== "poll" ? Layer.merge(PgStoreServices, PgWorkSignals()) : PgStoreServices).pipe(
    Layer.provideMerge(PgDatabase(target))
  )
