/** Callers for conformance tests: a dashboard user (every permission) or a secret key with chosen permissions. */
import { Effect } from "effect"
import { Kernel } from "@feedback/core"

/** Runs `effect` as a signed-in dashboard user of the organization (every permission). */
export const asDashboard = (organizationId: Kernel.OrganizationId) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(
    effect,
    Kernel.CurrentCaller,
    new Kernel.DashboardCaller({
      organizationId,
      userId: "00000000-0000-4000-8000-00000000000a" as Kernel.UserId,
      name: "Tester"
    })
  )

/** Runs `effect` as a secret key of the organization holding only `permissions`. */
export const asKey =
  (organizationId: Kernel.OrganizationId, permissions: ReadonlyArray<Kernel.Permission>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provideService(
      effect,
      Kernel.CurrentCaller,
      new Kernel.SecretKeyCaller({
        organizationId,
        keyId: "00000000-0000-4000-8000-00000000000b" as Kernel.SecretKeyId,
        permissions: new Set(permissions)
      })
    )
