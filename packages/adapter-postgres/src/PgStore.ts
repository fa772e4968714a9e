/**
 * Every core store service over PostgreSQL, in a schema of its own (`kernel/PgSchema.ts`), with migrations applied
 * when the layer is built unless `migrate: false` leaves them to a deploy step (`PgMigrate.ts`).
 */
import { Kernel, Organizations, type RateLimits } from "@feedback/core"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { migrations } from "./migrations/index.ts"
import { migrationStatus, runMigrations } from "./kernel/Migrations.ts"
import { type DatabaseTarget, PgDatabase, PgHostDatabase, type PgHostDatabaseOptions } from "./kernel/PgDatabase.ts"
import { PgStoreSchema } from "./kernel/PgSchema.ts"
import { PgCatalogRepository } from "./catalog/PgCatalogStore.ts"
import { PgOrderRepository } from "./orders/PgOrderStore.ts"
import { PgSurveyRepository } from "./surveys/PgSurveyStore.ts"
import { PgUnsubscribeRepository } from "./catalog/PgUnsubscribeStore.ts"
import { PgInstanceSecretRepository } from "./kernel/PgInstanceSecrets.ts"
import { PgStoreHealth } from "./kernel/PgStoreHealth.ts"
import { PgWorkSignals } from "./kernel/PgWorkSignals.ts"
import { PgIdempotencyRepository } from "./idempotency/PgIdempotencyStore.ts"
import { PgStoreRateLimitRepository } from "./ratelimit/PgRateLimitStore.ts"
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

export interface PgStoreOptions {
  /**
   * Apply pending migrations when the layer is built (default `true`). With `false` the store only checks that its
   * schema is up to date and fails to start otherwise, so that it can run as a role without DDL rights after a
   * separate migration step (`migratePostgres`, `feedback-pg-migrate`).
   */
  readonly migrate?: boolean | undefined
}

const Migrated = Layer.effectDiscard(runMigrations(migrations).pipe(Effect.orDie))

const CheckedUpToDate = Layer.effectDiscard(
  Effect.gen(function*() {
    const schema = yield* PgStoreSchema
    const { pending } = yield* migrationStatus(migrations)
    if (pending.length > 0) {
      return yield* Effect.die(
        new Error(
          `The store's schema "${schema.name}" lacks ${pending.length} migration(s) (${
            pending.map((m) => `${m.id}_${m.name}`).join(", ")
          }) and the store runs with migrate: false: run the migration step first (feedback-pg-migrate, or ` +
            "migratePostgres from @feedback/adapter-postgres)"
        )
      )
    }
  }).pipe(Effect.orDie)
)

const storeServices = <E>(
  rateLimits: Layer.Layer<RateLimits.RateLimitRepository, E, SqlClient.SqlClient>,
  options: PgStoreOptions = {}
) =>
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
    Kernel.CursorKey.layerStored.pipe(Layer.provideMerge(PgInstanceSecretRepository))
  ).pipe(Layer.provideMerge(options.migrate === false ? CheckedUpToDate : Migrated))

/**
 * The store services over a store connection (`PgDatabase`, `PgHostDatabase`): its client with the store's naming, in
 * the store's schema.
 */
export const PgStoreServices = (options?: PgStoreOptions) => storeServices(PgStoreRateLimitRepository, options)

/**
 * Embedded PGlite: one process owns the database, so its rate-limit levels live in that process, and every change
 * to a key or an organization is made by this process's `Organizations`, which announces it (after it committed: the
 * one connection serializes reads with it), so authenticated keys may be kept (docs/DECISIONS.md §27, §31).
 */
const EmbeddedStoreServices = (options?: PgStoreOptions) =>
  Layer.merge(
    storeServices(PgEmbeddedRateLimitRepository, options),
    Layer.sync(Organizations.CredentialChanges, () => Organizations.makeHeardCredentialChanges(() => true).service)
  )

/**
 * The store services with their own connection to `target`. On a server, idle background workers wait for the
 * database's notifications (`PgWorkSignals`); embedded PGlite keeps polling in process, and keeps its rate-limit
 * levels in the process (`PgEmbeddedRateLimitRepository`).
 */
export const PgStoreLayer = (target: DatabaseTarget, options?: PgStoreOptions) =>
  (target._tag === "Embedded"
    ? EmbeddedStoreServices(options)
    : target.workSignals !== "poll"
    ? Layer.merge(PgStoreServices(options), PgWorkSignals())
    : PgStoreServices(options)).pipe(
      Layer.provideMerge(PgDatabase(target))
    )

/**
 * The store services in a host's own PostgreSQL database, reached with the host's `PgClient` (its settings, whatever
 * its naming: `PgHostDatabase`), idle workers woken by the schema's notifications. The host's client stays the
 * host's: only the store's services come out.
 */
export const PgHostStoreLayer = (options: PgStoreOptions & PgHostDatabaseOptions = {}) =>
  Layer.merge(PgStoreServices(options), PgWorkSignals()).pipe(Layer.provide(PgHostDatabase(options)))
