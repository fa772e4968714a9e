/**
 * Request ids (docs/DECISIONS.md §14): a caller's well-formed `X-Request-Id` (1..128 of `[A-Za-z0-9._:-]`) becomes the
 * request's id, so one id follows a request through a client's, a proxy's and this server's logs; anything else is
 * replaced by one made here. The allowed characters are JSON- and header-safe, so the id is written as it is.
 */
import { randomBytes } from "node:crypto"

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

export const isWellFormedRequestId = (value: string): boolean => WELL_FORMED.test(value)

const processTag = randomBytes(4).toString("hex")
let counter = 0

/** Unique per process and cheap: a random process tag and a counter. */
export const nextRequestId = (): string => `req_${processTag}${(counter++).toString(36)}`

/** The id of a request: the caller's when well-formed (a repeated header counts as absent), else a new one. */
export const requestIdOf = (incoming: string | ReadonlyArray<string> | undefined): string =>
  typeof incoming === "string" && isWellFormedRequestId(incoming) ? incoming : nextRequestId()
