/**
 * The rules of kept keys (docs/DECISIONS.md §27), without a store: an answer is used only under the version it was
 * read under and for at most its age; an answer read while the version moved, or while nothing is heard, is not kept;
 * the oldest entry goes first.
 */
import { describe, expect, it } from "vitest"
import * as AuthenticationCache from "../src/organizations/AuthenticationCache.ts"
import { makeHeardCredentialChanges, unheardCredentialChanges } from "../src/organizations/CredentialChanges.ts"
import type { Authenticated } from "../src/organizations/Authenticated.ts"

const answer = (n: number) => ({ n }) as unknown as Authenticated

describe("AuthenticationCache", () => {
  it("keeps an answer under its version, and drops it when the version moves", () => {
    let listening = true
    const changes = makeHeardCredentialChanges(() => listening)
    const cache = AuthenticationCache.make(changes.service, { maxAgeMs: 1_000 })
    cache.set("a", cache.version(), 0, answer(1))
    expect(cache.get("a", 10)).toEqual(answer(1))
    expect(cache.get("a", 1_000)).toBeUndefined() // too old
    cache.set("a", cache.version(), 0, answer(1))
    changes.heard()
    expect(cache.get("a", 10)).toBeUndefined()
    cache.set("b", cache.version(), 0, answer(2))
    listening = false
    expect(cache.get("b", 10)).toBeUndefined() // nothing is trusted while not listening
    listening = true
    expect(cache.get("b", 10)).toBeUndefined() // and it was dropped
  })

  it("does not keep an answer read while the version moved, or when nothing is heard", () => {
    const changes = makeHeardCredentialChanges(() => true)
    const cache = AuthenticationCache.make(changes.service)
    const before = cache.version()
    changes.service.announce() // a revocation commits during the read
    cache.set("a", before, 0, answer(1))
    expect(cache.get("a", 1)).toBeUndefined()
    const unheard = AuthenticationCache.make(unheardCredentialChanges)
    unheard.set("a", unheard.version(), 0, answer(1))
    expect(unheard.get("a", 1)).toBeUndefined()
  })

  it("keeps at most maxEntries, the oldest going first", () => {
    const changes = makeHeardCredentialChanges(() => true)
    const cache = AuthenticationCache.make(changes.service, { maxEntries: 2 })
    for (const k of ["a", "b", "c"]) cache.set(k, cache.version(), 0, answer(1))
    expect(cache.get("a", 1)).toBeUndefined()
    expect(cache.get("b", 1)).toEqual(answer(1))
    expect(cache.get("c", 1)).toEqual(answer(1))
  })
})
