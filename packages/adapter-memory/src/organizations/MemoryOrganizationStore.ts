/** Organizations, secret keys, storefront records, unit of work and outbox in memory. */
import { Kernel, Organizations, type Webhooks } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase, type MemoryTable } from "../kernel/MemoryDatabase.ts"
import { domainEvents, fanOutMarks, webhookDeliveries } from "../kernel/MemoryTables.ts"

export const MemoryUnitOfWork = Layer.effect(
  Kernel.UnitOfWork,
  Effect.map(MemoryDatabase, (db) =>
    Kernel.UnitOfWork.of({
      transaction: (effect) => db.transaction(effect),
      organizationTransaction: (organizationId, effect) => db.organizationTransaction(organizationId, effect)
    }))
)

export const MemoryEventOutbox = Layer.effect(
  Kernel.EventOutbox,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const events = domainEvents(db)
    // The recording order, for the feed: a transaction holds the database's one write lock, so this is commit order.
    const order = db.table<string, number>("domain_event_order")
    const fannedOut = fanOutMarks(db)
    // A rolled-back transaction leaves a gap in the numbers, never a repeat.
    let lastSeq = 0
    const appendOne = (event: Kernel.DomainEvent) => {
      events.set(event.id, event)
      order.set(event.id, ++lastSeq)
    }
    /**
     * The feed's one scan (call under the write lock): events after `request.after` that `kept` keeps, in recording
     * order, up to the first one `stopsBefore` names, then those of the request's names, at most its limit.
     */
    const scan = (
      request: Kernel.FeedRequest,
      kept: (event: Kernel.DomainEvent) => boolean,
      stopsBefore: (event: Kernel.DomainEvent) => boolean
    ): Array<Kernel.FeedEntry> => {
      const after = request.after === undefined ? 0 : Number(request.after)
      const wanted = request.events === undefined ? undefined : new Set(request.events)
      const ordered = [...events.values()]
        .map((event) => ({ event, seq: order.get(event.id) ?? 0 }))
        .filter(({ event, seq }) => seq > after && kept(event))
        .sort((a, b) => a.seq - b.seq)
      const entries: Array<Kernel.FeedEntry> = []
      for (const { event, seq } of ordered) {
        if (entries.length >= request.limit || stopsBefore(event)) break
        if (wanted === undefined || wanted.has(event.event)) entries.push({ position: String(seq), event })
      }
      return entries
    }
    return Kernel.EventOutbox.of({
      append: (event) => db.mutate(() => appendOne(event)),
      appendAll: (batch) => db.mutate(() => batch.forEach(appendOne)),
      // Read under the write lock and the organization's gate, so a transaction still running (and perhaps rolling
      // back) is never seen, a long one of the organization's included.
      feed: (organizationId, request) =>
        db.transaction(
          Effect.sync(() => scan(request, (event) => event.organizationId === organizationId, () => false)),
          organizationId
        ),
      // Every organization's events (the in-process stream, §65), read under the write lock: a transaction still
      // running is never seen, and the stream stops before the first event of an organization whose long transaction
      // is open (its writes may still be undone, and must not be passed while they may yet commit).
      feedAll: (request) =>
        db.transaction(Effect.sync(() => scan(request, () => true, (event) => db.heldBack(event.organizationId)))),
      purge: (before, limit) =>
        db.mutate(() => {
          let purged = 0
          for (const e of [...events.values()]) {
            if (purged >= limit) break
            // Only what the dispatcher already fanned out: an event waiting for its deliveries stays.
            if (e.occurredAt < before && fannedOut.get(e.id) === true) {
              events.delete(e.id)
              order.delete(e.id)
              purged++
            }
          }
          return purged
        }),
      listForOrganization: (organizationId) =>
        Effect.sync(() => [...events.values()].filter((e) => e.organizationId === organizationId)),
      redact: (organizationId, redaction) =>
        db.mutate(() => {
          const deliveries = webhookDeliveries(db)
          const about = new Set<string>()
          for (const e of events.values()) {
            if (e.organizationId !== organizationId || !Kernel.isAbout(e, redaction)) continue
            about.add(e.id)
            const data = Kernel.redactData(e.data, redaction.fields)
            if (data !== e.data) events.set(e.id, { ...e, data })
          }
          for (const d of deliveries.values()) {
            if (d.organizationId !== organizationId || !about.has(d.eventId)) continue
            const body = Kernel.redactDeliveryBody(d.body, redaction.fields)
            if (body !== d.body) deliveries.set(d.id, { ...d, body })
          }
        })
    })
  })
)

export const MemoryOrganizationRepository = Layer.effect(
  Organizations.OrganizationRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const organizations = db.table<string, Organizations.Organization>("organizations")
    // Unique `externalId`s (docs/DECISIONS.md §65): the owner of each, kept in the same transaction as the rows.
    const byExternalId = db.table<string, string>("organizations_by_external_id")
    const taken = (externalId: string | undefined, id: string) =>
      externalId !== undefined && (byExternalId.get(externalId) ?? id) !== id
    return Organizations.OrganizationRepository.of({
      insert: (organization) =>
        db.mutate(() => {
          if (taken(organization.externalId, organization.id)) return false
          organizations.set(organization.id, organization)
          if (organization.externalId !== undefined) byExternalId.set(organization.externalId, organization.id)
          return true
        }).pipe(
          Effect.flatMap((inserted) =>
            inserted
              ? Effect.void
              : Effect.fail(new Organizations.ExternalIdTaken({ externalId: organization.externalId! }))
          )
        ),
      findById: (id) => Effect.sync(() => Option.fromUndefinedOr(organizations.get(id))),
      findByExternalId: (externalId) =>
        Effect.sync(() => {
          const id = byExternalId.get(externalId)
          return Option.fromUndefinedOr(id === undefined ? undefined : organizations.get(id))
        }),
      setExternalId: (id, externalId) =>
        db.mutate(() => {
          const current = organizations.get(id)
          if (current === undefined) return Option.some(Option.none<Organizations.Organization>())
          if (externalId !== null && taken(externalId, id)) return Option.none()
          if (current.externalId !== undefined) byExternalId.delete(current.externalId)
          const { externalId: _, ...rest } = current
          const updated: Organizations.Organization = externalId === null ? rest : { ...rest, externalId }
          organizations.set(id, updated)
          if (externalId !== null) byExternalId.set(externalId, id)
          return Option.some(Option.some(updated))
        }).pipe(
          Effect.flatMap((result) =>
            Option.isSome(result)
              ? Effect.succeed(result.value)
              : Effect.fail(new Organizations.ExternalIdTaken({ externalId: externalId! }))
          )
        ),
      setPlan: (id, plan) =>
        db.mutate(() => {
          const current = organizations.get(id)
          if (current === undefined) return Option.none()
          const updated: Organizations.Organization = { ...current, plan }
          organizations.set(id, updated)
          return Option.some(updated)
        }),
      isEmpty: Effect.sync(() => organizations.size === 0)
    })
  })
)

/**
 * Every change to a key or an organization is a write to this process's own tables (undone writes included), so
 * every change is heard: the version is the tables' write counts, and authenticated keys may be kept.
 */
export const MemoryCredentialChanges = Layer.effect(
  Organizations.CredentialChanges,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const organizations = db.table<string, Organizations.Organization>("organizations")
    const keys = db.table<string, Organizations.SecretKeyRecord>("secret_keys")
    const publishableKeys = db.table<string, Organizations.PublishableKeyRecord>("publishable_keys")
    return { version: () => organizations.version + keys.version + publishableKeys.version, announce: () => {} }
  })
)

export const MemorySecretKeyRepository = Layer.effect(
  Organizations.SecretKeyRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const keys = db.table<string, Organizations.SecretKeyRecord>("secret_keys")
    const byHash = db.table<string, string>("secret_keys_by_hash")
    return Organizations.SecretKeyRepository.of({
      insert: (key) =>
        db.mutate(() => {
          if (byHash.get(key.keyHash) !== undefined) return false
          keys.set(key.id, key)
          byHash.set(key.keyHash, key.id)
          return true
        }).pipe(
          Effect.flatMap((inserted) => inserted ? Effect.void : Effect.fail(new Organizations.SecretKeyHashTaken()))
        ),
      findByHash: (keyHash) =>
        Effect.sync(() => {
          const id = byHash.get(keyHash)
          return Option.fromUndefinedOr(id === undefined ? undefined : keys.get(id))
        }),
      listForOrganization: (organizationId) =>
        Effect.sync(() => [...keys.values()].filter((k) => k.organizationId === organizationId)),
      revoke: (organizationId, id, at) =>
        db.mutate(() => {
          const key = keys.get(id)
          if (key === undefined || key.organizationId !== organizationId) return Option.none()
          const revoked: Organizations.SecretKeyRecord = { ...key, revokedAt: key.revokedAt ?? at }
          keys.set(id, revoked)
          return Option.some(revoked)
        })
    })
  })
)

export const MemoryStorefrontRecordRepository = Layer.effect(
  Organizations.StorefrontRecordRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const publishableKeys = db.table<string, Organizations.Owned<Organizations.PublishableKeyRecord>>(
      "publishable_keys"
    )
    const integrations = db.table<string, Organizations.Owned<Organizations.Integration>>("integrations")
    const loyaltyPrograms = db.table<string, Organizations.Owned<Organizations.LoyaltyProgram>>("loyalty_programs")
    const wishlists = db.table<string, Organizations.Owned<Organizations.Wishlist>>("wishlists")
    const deleteOwned = <V extends { readonly organizationId: string }>(
      table: MemoryTable<string, V>,
      organizationId: string,
      id: string
    ) => db.mutate(() => table.get(id)?.organizationId === organizationId && table.delete(id))
    return Organizations.StorefrontRecordRepository.of({
      insertPublishableKey: (key) => db.mutate(() => publishableKeys.set(key.id, key)),
      newestPublishableKey: (organizationId) =>
        Effect.sync(() => {
          let newest: Organizations.Owned<Organizations.PublishableKeyRecord> | undefined
          for (const k of publishableKeys.values()) {
            if (k.organizationId !== organizationId || k.revokedAt !== null) continue
            if (
              newest === undefined || k.createdAt > newest.createdAt ||
              (k.createdAt === newest.createdAt && k.id > newest.id)
            ) newest = k
          }
          return Option.map(Option.fromUndefinedOr(newest), Organizations.toPublishableKeyView)
        }),
      listPublishableKeys: (organizationId) =>
        Effect.sync(() =>
          [...publishableKeys.values()]
            .filter((k) => k.organizationId === organizationId)
            .sort((a, b) =>
              a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0
            )
            .map(Organizations.toPublishableKeyView)
        ),
      revokePublishableKey: (organizationId, id, at) =>
        db.mutate(() => {
          const key = publishableKeys.get(id)
          if (key === undefined || key.organizationId !== organizationId) return Option.none()
          const revoked = { ...key, revokedAt: key.revokedAt ?? at }
          publishableKeys.set(id, revoked)
          return Option.some(Organizations.toPublishableKeyView(revoked))
        }),
      findPublishableKey: (presented) =>
        Effect.sync(() => {
          for (const k of publishableKeys.values()) if (k.key === presented) return Option.some(k)
          return Option.none()
        }),
      deletePublishableKey: (organizationId, id) => deleteOwned(publishableKeys, organizationId, id),
      insertIntegration: (integration) => db.mutate(() => integrations.set(integration.id, integration)),
      deleteIntegration: (organizationId, id) => deleteOwned(integrations, organizationId, id),
      insertLoyaltyProgram: (program) => db.mutate(() => loyaltyPrograms.set(program.id, program)),
      deleteLoyaltyProgram: (organizationId, id) => deleteOwned(loyaltyPrograms, organizationId, id),
      insertWishlist: (wishlist) => db.mutate(() => wishlists.set(wishlist.id, wishlist)),
      deleteWishlist: (organizationId, id) => deleteOwned(wishlists, organizationId, id)
    })
  })
)
