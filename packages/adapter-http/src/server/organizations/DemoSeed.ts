/**
 * First-run experience: on an empty store, create a demo organization and a key with every permission, and say
 * the key once. With DEMO_SECRET_KEY the key is fixed (and re-created on later starts if it is missing), so a
 * newcomer who lost the printed key can still get in — but a fixed key that was revoked stays revoked.
 *
 * Seeding is for trying the API out: on by default on the zero-setup stores (embedded PGlite, memory), off on a
 * PostgreSQL server unless `DEMO=true`, so a production deployment never grows an all-permissions key by accident.
 */
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Option } from "effect"
import type { StoreChoice } from "../StoreSelection.ts"
import { seedDemoStorefront } from "./DemoCatalog.ts"

/**
 * Where the store remembers which organization is the demo one (an instance-wide record, beside the cursor key), so
 * `/demo` finds it again after a restart. "" marks a store seeded before the demo had a storefront: no demo page.
 */
export const DEMO_ORGANIZATION_RECORD = "demo-organization"

/** The demo organization of the running store, once seeding found or made it (`/demo` reads it). */
export interface DemoSlot {
  current: Kernel.OrganizationId | undefined
}

export type DemoSeedResult =
  | { readonly _tag: "Created"; readonly organizationId: Kernel.OrganizationId; readonly secretKey: string }
  | {
    readonly _tag: "Existing"
    readonly secretKey: string | undefined
    /** The demo organization with a storefront, when the store has one. */
    readonly organizationId: Kernel.OrganizationId | undefined
  }
  /** DEMO_SECRET_KEY names a key that was revoked: it is not issued again. */
  | { readonly _tag: "Revoked" }
  | { readonly _tag: "Off"; readonly reason: string }

/** Whether to seed: `DEMO` decides when set; unset, only the zero-setup stores seed. */
export const demoSeeding = (
  demo: boolean | undefined,
  store: StoreChoice
): { readonly _tag: "Seed" } | Extract<DemoSeedResult, { _tag: "Off" }> =>
  demo === true
    ? { _tag: "Seed" }
    : demo === false
    ? { _tag: "Off", reason: "DEMO=false" }
    : store._tag === "Server"
    ? { _tag: "Off", reason: "not seeded on a PostgreSQL server; set DEMO=true to create a demo organization" }
    : { _tag: "Seed" }

/**
 * Seeds in one transaction, so a failed seed leaves nothing behind. Another process starting at the same moment
 * with the same DEMO_SECRET_KEY may win the key; this one then rolls back its organization and reports the key.
 * Provisioning goes through the `Organizations` service, like the operator API; the storefront (`DemoCatalog.ts`)
 * through the catalog, review and question use-cases. `siteDomain`: the host name the API is reached at.
 */
export const seedDemo = (fixedKey: string | undefined, siteDomain = "localhost") =>
  Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    const uow = yield* Kernel.UnitOfWork
    const keys = yield* Organizations.SecretKeyRepository
    const organizationStore = yield* Organizations.OrganizationRepository
    const records = yield* Kernel.InstanceSecretRepository
    const demoOrganization = records.getOrCreate(DEMO_ORGANIZATION_RECORD, "").pipe(
      Effect.map((id) => id === "" ? undefined : id as Kernel.OrganizationId)
    )
    const seedOnce = uow.transaction(Effect.gen(function*() {
      if (fixedKey !== undefined) {
        const known = yield* keys.findByHash(Organizations.hashSecretKey(fixedKey))
        if (Option.isSome(known)) {
          return (known.value.revokedAt === null
            ? { _tag: "Existing", secretKey: fixedKey, organizationId: yield* demoOrganization }
            : { _tag: "Revoked" }) satisfies DemoSeedResult
        }
      } else if (!(yield* organizationStore.isEmpty)) {
        return {
          _tag: "Existing",
          secretKey: undefined,
          organizationId: yield* demoOrganization
        } satisfies DemoSeedResult
      }
      const organization = yield* organizations.createOrganization({ name: "Demo organization" })
      const input = { permissions: Kernel.permissions, name: "Demo key" }
      const key = yield* (fixedKey === undefined
        ? organizations.issueSecretKey(organization.id, input)
        : organizations.issueChosenSecretKey(organization.id, input, fixedKey))
      yield* seedDemoStorefront(organization.id, siteDomain)
      yield* records.getOrCreate(DEMO_ORGANIZATION_RECORD, organization.id)
      return { _tag: "Created", organizationId: organization.id, secretKey: key.secretKey } satisfies DemoSeedResult
    }))
    const result: DemoSeedResult = yield* seedOnce.pipe(
      Effect.catchTag("SecretKeyHashTaken", () => seedOnce),
      Effect.catchTag("NotFound", Effect.die),
      Effect.catchTag("SecretKeyHashTaken", Effect.die)
    )
    return result
  })
