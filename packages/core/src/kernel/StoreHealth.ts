/**
 * Whether the store answers (`GET /ready`, docs/DECISIONS.md §16): a trivial round trip, bounded in time, so a load
 * balancer stops sending traffic to a process whose database is gone rather than letting requests fail one by one.
 */
import { Context, type Effect, Schema } from "effect"

/** 503: the store did not answer. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

export class StoreHealth extends Context.Service<StoreHealth, {
  readonly check: Effect.Effect<void, StoreUnavailable>
}>()("feedback/StoreHealth") {}
