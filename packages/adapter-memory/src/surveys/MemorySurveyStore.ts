/** Surveys in memory: each row the stored survey with its owner and the `nextDueAt` workers claim by. */
import { Kernel, Surveys, Webhooks } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { memoryTables, ownedBy } from "../kernel/MemoryTables.ts"

interface SurveyRow extends Surveys.StoredSurvey {
  readonly organizationId: Kernel.OrganizationId
  readonly nextDueAt: Kernel.Timestamp.Timestamp | null
}

const rowOf = (organizationId: Kernel.OrganizationId, stored: Surveys.StoredSurvey): SurveyRow => ({
  organizationId,
  survey: stored.survey,
  token: stored.token,
  claim: stored.claim,
  nextDueAt: Surveys.nextDueAt(stored)
})

const storedOf = (row: SurveyRow): Surveys.StoredSurvey => ({ survey: row.survey, token: row.token, claim: row.claim })

/** A survey with a step still to run or in flight. */
const active = (row: SurveyRow) => row.nextDueAt !== null || row.claim !== null

/**
 * `SurveyRepository.enrollOrders` as a step of the memory transaction already running: the survey store's, and the
 * order store's bulk move, which enrolls the orders it moves (docs/DECISIONS.md §75).
 */
export const memoryEnrolment = (db: MemoryDatabase["Service"]) => {
  const rows = db.table<string, SurveyRow>("surveys")
  const { customers, orders } = memoryTables(db)
  return (
    organizationId: Kernel.OrganizationId,
    orderIds: ReadonlyArray<Kernel.OrderId>,
    plans: ReadonlyArray<Surveys.EnrolmentPlan>,
    linkBase: string
  ): number => {
    const taken = new Set<string>()
    for (const r of rows.values()) {
      if (r.organizationId === organizationId) taken.add(`${r.survey.flowId}/${r.survey.orderId}`)
    }
    let created = 0
    for (const orderId of orderIds) {
      const order = ownedBy(organizationId, orders.get(orderId))
      if (order === undefined) continue
      const customer = ownedBy(organizationId, customers.get(order.customerId))
      for (const plan of plans) {
        const key = `${plan.flow.id}/${order.id}`
        if (taken.has(key) || !Surveys.planEnrolls(plan, order, customer?.email ?? null)) continue
        taken.add(key)
        const token = Surveys.generateSurveyToken()
        const stored = Surveys.newSurvey({
          id: Kernel.uuidV7(Date.now()) as Kernel.SurveyId,
          token,
          url: Surveys.surveyUrl(linkBase, token),
          flow: plan.flow,
          order,
          customer,
          at: plan.at
        })
        rows.set(stored.survey.id, rowOf(organizationId, stored))
        created++
      }
    }
    return created
  }
}

export const MemorySurveyRepository = Layer.effect(
  Surveys.SurveyRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const rows = db.table<string, SurveyRow>("surveys")
    const { customers } = memoryTables(db)
    const enroll = memoryEnrolment(db)

    const ofOrganization = (organizationId: string) => {
      const out: Array<SurveyRow> = []
      for (const row of rows.values()) if (row.organizationId === organizationId) out.push(row)
      return out
    }
    const emailOf = (organizationId: string, customerId: string) =>
      ownedBy(organizationId, customers.get(customerId))?.email ?? null

    return Surveys.SurveyRepository.of({
      contactsOf: (organizationId, customerIds) =>
        Effect.sync(() => {
          const found = new Map<string, { readonly email: string; readonly emailOptOut: boolean }>()
          for (const id of customerIds) {
            const customer = ownedBy(organizationId, customers.get(id))
            if (customer !== undefined) found.set(id, { email: customer.email, emailOptOut: customer.emailOptOut })
          }
          return found
        }),
      insertSurveys: (organizationId, surveys) =>
        db.mutate(() => {
          const taken = new Set(ofOrganization(organizationId).map((r) => `${r.survey.flowId}/${r.survey.orderId}`))
          return surveys.map((stored) => {
            const key = `${stored.survey.flowId}/${stored.survey.orderId}`
            if (taken.has(key)) return false
            taken.add(key)
            rows.set(stored.survey.id, rowOf(organizationId, stored))
            return true
          })
        }),
      enrollOrders: (organizationId, orderIds, plans, linkBase) =>
        db.mutate(() => enroll(organizationId, orderIds, plans, linkBase)),
      findSurvey: (organizationId, id) =>
        Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, rows.get(id))), (r) => r.survey)),
      // A memory transaction holds the one write lock for its whole run: reading is enough.
      lockSurvey: (organizationId, id) =>
        Effect.sync(() => Option.map(Option.fromUndefinedOr(ownedBy(organizationId, rows.get(id))), storedOf)),
      organizationOfToken: (token) =>
        Effect.sync(() => {
          for (const row of rows.values()) if (row.token === token) return Option.some(row.organizationId)
          return Option.none()
        }),
      lockSurveyByToken: (organizationId, token) =>
        Effect.sync(() =>
          Option.map(Option.fromUndefinedOr(ofOrganization(organizationId).find((r) => r.token === token)), storedOf)
        ),
      lockActiveOfOrders: (organizationId, orderIds) =>
        Effect.sync(() => {
          const wanted = new Set<string>(orderIds)
          return ofOrganization(organizationId).filter((r) => active(r) && wanted.has(r.survey.orderId)).map(storedOf)
        }),
      lockActiveOfFlow: (organizationId, flowId) =>
        Effect.sync(() =>
          ofOrganization(organizationId).filter((r) => active(r) && r.survey.flowId === flowId).map(storedOf)
        ),
      saveSurveys: (organizationId, surveys) =>
        db.mutate(() => {
          for (const stored of surveys) {
            if (ownedBy(organizationId, rows.get(stored.survey.id)) !== undefined) {
              rows.set(stored.survey.id, rowOf(organizationId, stored))
            }
          }
        }),
      deleteSurvey: (organizationId, id) =>
        db.mutate(() => {
          const row = ownedBy(organizationId, rows.get(id))
          if (row === undefined) return Option.none<Surveys.Survey>()
          rows.delete(id)
          return Option.some(row.survey)
        }),
      listSurveys: (organizationId, request) =>
        Effect.sync(() =>
          Kernel.pageInMemory(ofOrganization(organizationId).map((r) => r.survey), request, {
            get: (survey, path) => Surveys.surveyField(survey, emailOf(organizationId, survey.customerId))(path),
            id: (survey) => survey.id,
            searchValues: (survey) => [emailOf(organizationId, survey.customerId)]
          })
        ),
      claimDue: (workerId, at, limit) =>
        db.mutate(() => {
          // Organizations in turn (docs/DECISIONS.md §56), each one's steps oldest due first.
          const due = Webhooks.fairClaimOrder(
            [...rows.values()]
              .filter((r) => r.claim === null && r.nextDueAt !== null && r.nextDueAt <= at)
              .sort((a, b) =>
                a.nextDueAt! < b.nextDueAt! ? -1 : a.nextDueAt! > b.nextDueAt! ? 1 : a.survey.id < b.survey.id ? -1 : 1
              ),
            (r) => r.organizationId
          ).slice(0, limit)
          return due.map((row): Surveys.ClaimedSurvey => {
            const position = row.survey.steps.find((s) =>
              s.type === "email" && s.outcome === null && s.doneAt === null
            )!.position
            const claimed: SurveyRow = {
              ...row,
              claim: { workerId, claimedAt: at, position, sendingAt: null },
              nextDueAt: null
            }
            rows.set(row.survey.id, claimed)
            return { organizationId: row.organizationId, ...storedOf(claimed) }
          })
        }),
      markSending: (workerId, at, surveys) =>
        db.mutate(() => {
          const ours = new Set<Kernel.SurveyId>()
          for (const { id, organizationId } of surveys) {
            const row = ownedBy(organizationId, rows.get(id))
            if (row === undefined || row.claim?.workerId !== workerId) continue
            rows.set(id, { ...row, claim: { ...row.claim, sendingAt: at } })
            ours.add(id)
          }
          return ours
        }),
      nextDueAt: Effect.sync(() => {
        let earliest: Kernel.Timestamp.Timestamp | undefined
        for (const row of rows.values()) {
          if (
            row.claim === null && row.nextDueAt !== null && (earliest === undefined || row.nextDueAt < earliest)
          ) earliest = row.nextDueAt
        }
        return Option.fromUndefinedOr(earliest)
      }),
      staleClaims: (claimedBefore) =>
        Effect.sync(() =>
          [...rows.values()]
            .filter((r) => r.claim !== null && (r.claim.sendingAt ?? r.claim.claimedAt) < claimedBefore)
            .map((r) => ({ organizationId: r.organizationId, id: r.survey.id }))
        )
    })
  })
)
