/**
 * Admissions made before the HTTP stack and handed to it (docs/DECISIONS.md §71): the revalidation gate spends a
 * storefront read's bucket to learn the content version; when the tag does not match, the request goes the full path,
 * which takes the gate's decision and version here instead of spending again. Keyed by the request object the
 * framework reads (`HttpServerRequest.source`), so nothing outlives the request, and taken once.
 */
import type { RateLimits } from "@feedback/core"

export interface HandedAdmission {
  /** The bucket charged (key and client address); the full path uses the admission only for the same one. */
  readonly bucketKey: string
  readonly decision: RateLimits.SpendDecision
  /** The content version read after the spend; undefined when it was not read (the full path reads it then). */
  readonly storefrontVersion: string | undefined
}

const handed = new WeakMap<object, HandedAdmission>()

export const handAdmission = (source: object, admission: HandedAdmission): void => {
  handed.set(source, admission)
}

/** The admission handed with `source` for `bucketKey`, removed; undefined when there is none. */
export const takeAdmission = (source: object, bucketKey: string): HandedAdmission | undefined => {
  const admission = handed.get(source)
  if (admission === undefined) return undefined
  handed.delete(source)
  return admission.bucketKey === bucketKey ? admission : undefined
}
