/**
 * Whether the store answers (`GET /ready`, docs/DECISIONS.md §16): a trivial round trip, bounded in time, so a load
 * balancer stops sending traffic to a process whose database is gone rather than letting requests fail one by one.
 */
import { Context, type Effect, Schema } from "effect"

/** 503: the store did not answer. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

/**
 * The connection pool of a store as `/metrics` reports it (docs/DECISIONS.md §19): its size limit, and, where the
 * database can say, the connections this pool holds open and those running a statement now.
 */
export interface PoolUsage {
  readonly max: number
  readonly open?: number | undefined
  readonly busy?: number | undefined
}

export class StoreHealth extends Context.Service<StoreHealth, {
  readonly check: Effect.Effect<void, StoreUnavailable>
  /** Undefined for a store without a pool (memory); a failure to measure is undefined too, never an error. */
  readonly poolUsage: Effect.Effect<PoolUsage | undefined>
}>()("feedback/StoreHealth") {}
