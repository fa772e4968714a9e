/**
 * What a store does with an `SqlError` that is not a business outcome. Validation should keep every bad value
 * away from SQL; this is the safety net below it (docs/SECURITY.md: no input produces a 5xx). When PostgreSQL's
 * SQLSTATE says the VALUE was at fault, the store reports a `StoreRejection` carrying the 400/409 the client should
 * see; anything else (a lost connection, a bug in a query) stays a defect and answers 500.
 *
 * The SQLSTATE is the `code` field of the server's error message, which @effect/sql-pg keeps on the reason's
 * `cause` (PGlite speaks the same wire protocol, so it reports the same codes).
 */
import { Kernel } from "@feedback/core"
import { Effect } from "effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"

interface ValueFault {
  readonly status: 400 | 409
  readonly message: string
}

const unstorableText = "contains text that cannot be stored (such as a NUL character or invalid Unicode); remove it"
const impossibleTime =
  "contains a date or time that does not exist or is out of range; send an ISO 8601 instant such as 2026-01-31T12:00:00.000Z"

/**
 * SQLSTATEs whose cause is the value sent, by exact code, then by class (the first two characters). Classes 22
 * (data exception) and 54 (program limit exceeded) are always about the data; in class 23 only a unique clash
 * (409) and a check violation (400) are: a foreign-key or not-null violation means a use-case missed a rule.
 */
const valueFaults: Readonly<Record<string, ValueFault>> = {
  "22021": { status: 400, message: unstorableText }, // character_not_in_repertoire: invalid byte sequence, NUL
  "22P05": { status: 400, message: unstorableText }, // untranslatable_character
  "22007": { status: 400, message: impossibleTime }, // invalid_datetime_format
  "22008": { status: 400, message: impossibleTime }, // datetime_field_overflow
  "22003": { status: 400, message: "contains a number out of the range that can be stored" }, // numeric_value_out_of_range
  "22001": { status: 400, message: "contains a value longer than can be stored" }, // string_data_right_truncation
  "22P02": { status: 400, message: "contains a value of the wrong form" }, // invalid_text_representation
  "23505": {
    status: 409,
    message: "conflicts with an existing record; change the value that must be unique and retry"
  },
  "23514": { status: 400, message: "contains a value outside what can be stored" }, // check_violation
  "22": { status: 400, message: "contains a value that cannot be stored" },
  "54": { status: 400, message: "is too large to store or process (for example a value too long to index); send less" }
}

/** The SQLSTATE of a server-reported error, if there is one. */
export const sqlStateOf = (error: SqlError): string | undefined => {
  const cause: unknown = error.reason.cause
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return undefined
  return typeof cause.code === "string" && /^[0-9A-Z]{5}$/.test(cause.code) ? cause.code : undefined
}

/** The tagged error a client should get for `error`, when the value sent caused it. */
export const valueFaultOf = (error: SqlError): Kernel.InvalidRequest | Kernel.Conflict | undefined => {
  const state = sqlStateOf(error)
  if (state === undefined) return undefined
  const fault = valueFaults[state] ?? (state.startsWith("23") ? undefined : valueFaults[state.slice(0, 2)])
  if (fault === undefined) return undefined
  return fault.status === 409
    ? new Kernel.Conflict({ message: `The request ${fault.message}.` })
    : Kernel.InvalidRequest.single("", `The request ${fault.message}.`)
}

/**
 * `Effect.orDie` for store queries: an `SqlError` caused by the value becomes a `StoreRejection` defect (answered
 * 400/409 at the HTTP boundary), everything else dies as it is.
 */
export const orDie = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  Effect.catch(effect, (error) => isSqlError(error) ? dieSql(error) : Effect.die(error))

/** The defect for an `SqlError`: a `StoreRejection` when the value caused it, else the error itself. */
export const dieSql = (error: SqlError): Effect.Effect<never> => {
  const fault = valueFaultOf(error)
  return Effect.die(fault === undefined ? error : new Kernel.StoreRejection({ error: fault }))
}
