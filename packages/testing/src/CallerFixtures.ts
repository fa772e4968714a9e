/** Callers for conformance tests: a dashboard user (every permission) or a secret key with chosen permissions. */
import { Effect } from "effect"
import {
  CurrentCaller,
  DashboardCaller,
  type OrganizationId,
  type Permission,
  SecretKeyCaller,
  type SecretKeyId,
  type UserId
} from "@feedback/core"

/** Runs `effect` as a signed-in dashboard user of the organization (every permission). */
export const asDashboard = (organizationId: OrganizationId) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(
    effect,
    CurrentCaller,
    new DashboardCaller({
      organizationId,
      userId: "00000000-0000-4000-8000-00000000000a" as UserId,
      name: "Tester"
    })
  )

/** Runs `effect` as a secret key of the organization holding only `permissions`. */
export const asKey =
  (organizationId: OrganizationId, permissions: ReadonlyArray<Permission>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provideService(
      effect,
      CurrentCaller,
      new SecretKeyCaller({
        organizationId,
        keyId: "00000000-0000-4000-8000-00000000000b" as SecretKeyId,
        permissions: new Set(permissions)
      })
    )
