/**
 * Who is making a call. The core takes the caller as a value: a secret key (rate limited, holds a subset of the
 * permissions) or a signed-in dashboard user (not rate limited, spec: Authentication 4). The HTTP adapter only
 * produces secret-key callers; an embedding host may produce dashboard callers.
 */
import { Context, Data, Effect } from "effect"
import { Forbidden } from "./Errors.ts"
import type { OrganizationId, SecretKeyId, UserId } from "./Ids.ts"
import type { Permission } from "./Permission.ts"

export class SecretKeyCaller extends Data.TaggedClass("SecretKeyCaller")<{
  readonly organizationId: OrganizationId
  readonly keyId: SecretKeyId
  readonly permissions: ReadonlySet<Permission>
}> {}

export class DashboardCaller extends Data.TaggedClass("DashboardCaller")<{
  readonly organizationId: OrganizationId
  readonly userId: UserId
  readonly name: string
}> {}

export type Caller = SecretKeyCaller | DashboardCaller

export class CurrentCaller extends Context.Service<CurrentCaller, Caller>()("feedback/CurrentCaller") {}

/** Dashboard users act with every permission; secret keys only with those they were issued. */
export const hasPermission = (caller: Caller, permission: Permission): boolean =>
  caller._tag === "DashboardCaller" || caller.permissions.has(permission)

/** The current caller, or Forbidden naming the permission it lacks. */
export const requirePermission = (permission: Permission): Effect.Effect<Caller, Forbidden, CurrentCaller> =>
  CurrentCaller.use((caller) =>
    hasPermission(caller, permission) ? Effect.succeed(caller) : Effect.fail(Forbidden.missing(permission))
  )

/** An identifier of the actor for audit records (deletion records, logs): never a secret. */
export const actorId = (caller: Caller): string =>
  caller._tag === "SecretKeyCaller" ? `key:${caller.keyId}` : `user:${caller.userId}`
