/**
 * What one organization may take of the webhook machinery that every organization shares (docs/FAIRNESS.md): a cap
 * on its webhooks, a cap on the delivery slots it holds at once, and claims that take organizations in turn.
 */

/** Webhooks an organization may register; one more is a 400 naming the cap (docs/DECISIONS.md §56). */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 20

/**
 * Deliveries an organization may have queued (pending) before the fan-out of its next events waits (docs/DECISIONS.md
 * §59), on every store: its events stay in the outbox, stored once, instead of multiplying by its webhooks, and other
 * organizations' events are fanned out meanwhile. Whatever one request records, what it fans out at once is this plus
 * one fan-out unit of work (`fanOutBatchSize` events × `MAX_WEBHOOKS_PER_ORGANIZATION`).
 */
export const MAX_QUEUED_DELIVERIES_PER_ORGANIZATION = 1_000

/**
 * Interleaves claim candidates by organization: every organization's first, then every organization's second, and
 * so on; organizations in the order their first candidate appears. `candidates` are in each organization's own
 * order (oldest first), which is kept. Pure: a store that claims or fans out in memory orders its candidates with
 * it, and PostgreSQL's claims and fan-out order by the same turn (`row_number()` per organization).
 */
export const fairClaimOrder = <A>(candidates: ReadonlyArray<A>, organizationOf: (a: A) => string): Array<A> => {
  const turns = new Map<string, number>()
  const ranked = candidates.map((candidate, index) => {
    const organization = organizationOf(candidate)
    const turn = turns.get(organization) ?? 0
    turns.set(organization, turn + 1)
    return { candidate, turn, index }
  })
  return ranked.sort((a, b) => a.turn - b.turn || a.index - b.index).map((r) => r.candidate)
}
