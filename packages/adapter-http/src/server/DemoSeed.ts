/**
 * First-run experience: on an empty store, create a demo organization and a key with every permission, and say
 * the key once. With DEMO_SECRET_KEY the key is fixed (and re-created on later starts if it is missing), so a
 * newcomer who lost the printed key can still get in.
 */
import { authenticateSecretKey, OrganizationRepository, permissions, Provisioning } from "@feedback/core"
import { Effect, Option } from "effect"

export type DemoSeedResult =
  | { readonly _tag: "Created"; readonly organizationId: string; readonly secretKey: string }
  | { readonly _tag: "Existing"; readonly secretKey: string | undefined }

export const seedDemo = (fixedKey: string | undefined) =>
  Effect.gen(function*() {
    const empty = yield* OrganizationRepository.use((r) => r.isEmpty)
    if (!empty) {
      if (fixedKey === undefined) return { _tag: "Existing", secretKey: undefined } as DemoSeedResult
      const known = yield* Effect.option(authenticateSecretKey(fixedKey))
      if (Option.isSome(known)) return { _tag: "Existing", secretKey: fixedKey } as DemoSeedResult
    }
    const organization = yield* Provisioning.createOrganization({ name: "Demo organization" })
    const key = yield* Provisioning.issueSecretKey(organization.id, { permissions, name: "Demo key" }, fixedKey)
    return { _tag: "Created", organizationId: organization.id, secretKey: key.secretKey } as DemoSeedResult
  })
