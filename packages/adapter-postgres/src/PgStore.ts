/** Every core store service over PostgreSQL, with migrations applied when the layer is built. */
import { CredentialChanges, CursorKey, makeHeardCredentialChanges, type RateLimitRepository } from "@feedback/core"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { migrations } from "./migrations/index.ts"
import { runMigrations } from "./kernel/Migrations.ts"
import { PgDatabase, type DatabaseTarget } from "./kernel/PgDatabase.ts"
import { PgCatalogRepository } from "./catalog/PgCatalogStore.ts"
import { PgOrderRepository } from "./orders/PgOrderStore.ts"
import { PgSurveyRepository } from "./surveys/PgSurveyStore.ts"
import { PgUnsubscribeRepository } from "./catalog/PgUnsubscribeStore.ts"
import { PgInstanceSecretRepository } from "./kernel/PgInstanceSecrets.ts"
import { PgStoreHealth } from "./kernel/PgStoreHealth.ts"
import { PgWorkSignals } from "./kernel/PgWorkSignals.ts"
import { PgIdempotencyRepository } from "./idempotency/PgIdempotencyStore.ts"
import { PgRateLimitRepository } from "./ratelimit/PgRateLimitStore.ts"
import { PgEmbeddedRateLimitRepository } from "./ratelimit/PgEmbeddedRateLimitStore.ts"
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

const storeServices = <E>(rateLimits: Layer.Layer<RateLimitRepository, E, SqlClient.SqlClient>) =>
  Layer.mergeAll(
    PgUnitOfWork,
    PgEventOutbox,
    PgProductQuestionRepository,
    PgEmailOutboxRepository,
    PgOrganizationRepository,
    PgSecretKeyRepository,
    PgStorefrontRecordRepository,
    rateLimits,
    PgCatalogRepository,
    PgOrderRepository,
    PgSurveyRepository,
    PgUnsubscribeRepository,
    PgReviewRepository,
    PgSetupStore,
    PgWebhookRepository,
    PgReviewWriteRepository,
    PgJobRepository,
    PgStoreHealth,
    PgIdempotencyRepository,
    // The generated cursor key is read (or stored, by the first process) once per layer build.
    CursorKey.layerStored.pipe(Layer.provideMerge(PgInstanceSecretRepository))
  ).pipe(Layer.provideMerge(Migrated))

/** The store services over an existing SqlClient (so a host can share its own pool). */
export const PgStoreServices = storeServices(PgRateLimitRepository)

/**
 * Embedded PGlite: one process owns the database, so its rate-limit levels live in that process, and every change
 * to a key or an organization is made by this process's `Organizations`, which announces it (after it committed: the
 * one connection serializes reads with it), so authenticated keys may be kept (docs/DECISIONS.md §27, §31).
 */
const EmbeddedStoreServices = Layer.merge(
  storeServices(PgEmbeddedRateLimitRepository),
  Layer.sync(CredentialChanges, () => makeHeardCredentialChanges(() => true).service)
)

/**
 * The store services with their own connection to `target`. On a server, idle background workers wait for the
 * database's notifications (`PgWorkSignals`); embedded PGlite keeps polling in process, and keeps its rate-limit
 * levels in the process (`PgEmbeddedRateLimitRepository`).
 */
export const PgStoreLayer = (target: DatabaseTarget) =>
  (target._tag === "Embedded"
    ? EmbeddedStoreServices
    : target.workSignals !== "poll"
    ? Layer.merge(PgStoreServices, PgWorkSignals())
    : PgStoreServices).pipe(
      Layer.provideMerge(PgDatabase(target))
    )
