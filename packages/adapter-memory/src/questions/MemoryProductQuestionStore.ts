/** Product questions, their answers and the email outbox in memory. */
import { Kernel, Questions, type Webhooks } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { MemoryDatabase } from "../kernel/MemoryDatabase.ts"
import { domainEvents, memoryTables, unowned, webhookDeliveries } from "../kernel/MemoryTables.ts"

const questionTables = (db: MemoryDatabase["Service"]) => ({
  questions: db.table<string, Questions.OwnedQuestion>("product_questions"),
  answers: db.table<string, Questions.OwnedAnswer>("product_question_answers"),
  notices: db.table<string, Questions.EmailNotice>("email_outbox"),
  events: domainEvents(db),
  deliveries: webhookDeliveries(db)
})

/**
 * How an address appears in a stored webhook body (the envelope is `JSON.stringify`d, keys in a fixed order), and
 * what replaces it: the body keeps its bytes otherwise, only the address becomes null.
 */
const askerEmailJson = (email: string): string => `"askerEmail":${JSON.stringify(email)}`
const BLANK_ASKER_EMAIL = `"askerEmail":null`

const byCreatedThenId = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

export const MemoryProductQuestionRepository = Layer.effect(
  Questions.ProductQuestionRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { customers, products, sites } = memoryTables(db)
    const { answers, deliveries, events, questions } = questionTables(db)

    const owned = (organizationId: string, id: string) => {
      const q = questions.get(id)
      return q !== undefined && q.organizationId === organizationId ? q : undefined
    }

    const access = (organizationId: string): Kernel.MemoryListAccess<Questions.OwnedQuestion> => {
      const related = (q: Questions.OwnedQuestion, kind: "product" | "customer") => {
        const row = kind === "product"
          ? products.get(q.productId)
          : q.customerId === null
          ? undefined
          : customers.get(q.customerId)
        return row !== undefined && row.organizationId === organizationId ? row : undefined
      }
      return {
        id: (q) => q.id,
        get: (q, path) => {
          const dot = path.indexOf(".")
          if (dot < 0) return (q as unknown as Record<string, unknown>)[path]
          const kind = path.slice(0, dot)
          const row = kind === "product" || kind === "customer" ? related(q, kind) : undefined
          return row === undefined ? null : (row as unknown as Record<string, unknown>)[path.slice(dot + 1)]
        },
        searchValues: (q) => {
          const product = products.get(q.productId)
          return [q.body, q.askerName, q.askerEmail, product?.organizationId === organizationId ? product.title : null]
        }
      }
    }

    return Questions.ProductQuestionRepository.of({
      list: (organizationId, request, answered) =>
        Effect.sync(() => {
          const scoped = [...questions.values()].filter((q) =>
            q.organizationId === organizationId &&
            (answered === undefined || (q.publishedAnswerCount > 0) === answered)
          )
          const page = Kernel.pageInMemory(scoped, request, access(organizationId))
          return {
            data: page.data.map((q): Questions.ProductQuestionRecord => unowned(q)),
            nextCursor: page.nextCursor
          }
        }),
      findById: (organizationId, id) =>
        // Memory transactions hold one global write lock, so `forUpdate` needs nothing more.
        Effect.sync(() =>
          Option.map(Option.fromUndefinedOr(owned(organizationId, id)), (q): Questions.ProductQuestionRecord =>
            unowned(q))
        ),
      insert: (question) => db.mutate(() => questions.set(question.id, question)),
      update: (question) =>
        db.mutate(() => {
          const current = owned(question.organizationId, question.id)
          if (current !== undefined) questions.set(question.id, { ...question, notifiedAt: current.notifiedAt })
        }),
      markNotified: (organizationId, id, at) =>
        db.mutate(() => {
          const current = owned(organizationId, id)
          if (current === undefined) return false
          if (current.notifiedAt === null) questions.set(id, { ...current, notifiedAt: at })
          return true
        }),
      delete: (organizationId, id) =>
        db.mutate(() => {
          const current = owned(organizationId, id)
          if (current === undefined) return Option.none()
          for (const a of [...answers.values()]) {
            if (a.organizationId === organizationId && a.productQuestionId === id) answers.delete(a.id)
          }
          const about = new Set<string>()
          for (const e of [...events.values()]) {
            const data = e.data as { readonly id?: unknown; readonly askerEmail?: unknown } | null
            if (
              e.organizationId === organizationId && e.event.startsWith("productQuestion.") &&
              typeof data === "object" && data !== null && data.id === id
            ) {
              about.add(e.id)
              if (data.askerEmail != null) events.set(e.id, { ...e, data: { ...data, askerEmail: null } })
            }
          }
          if (current.askerEmail !== null) {
            const needle = askerEmailJson(current.askerEmail)
            for (const d of [...deliveries.values()]) {
              if (d.organizationId === organizationId && about.has(d.eventId) && d.body.includes(needle)) {
                deliveries.set(d.id, { ...d, body: d.body.split(needle).join(BLANK_ASKER_EMAIL) })
              }
            }
          }
          questions.delete(id)
          return Option.some(unowned(current) as Questions.ProductQuestionRecord)
        }),
      insertAnswer: (answer) => db.mutate(() => answers.set(answer.id, answer)),
      findAnswer: (organizationId, questionId, answerId) =>
        Effect.sync(() => {
          const a = answers.get(answerId)
          return a !== undefined && a.organizationId === organizationId && a.productQuestionId === questionId
            ? Option.some(unowned(a) as Questions.ProductQuestionAnswer)
            : Option.none()
        }),
      updateAnswer: (answer) =>
        db.mutate(() => {
          if (answers.get(answer.id)?.organizationId === answer.organizationId) answers.set(answer.id, answer)
        }),
      deleteAnswer: (organizationId, answerId) =>
        db.mutate(() => {
          if (answers.get(answerId)?.organizationId === organizationId) answers.delete(answerId)
        }),
      answersOf: (organizationId, questionIds) =>
        Effect.sync(() => {
          const wanted = new Set<string>(questionIds)
          return [...answers.values()]
            .filter((a) => a.organizationId === organizationId && wanted.has(a.productQuestionId))
            .sort(byCreatedThenId)
            .map((a): Questions.ProductQuestionAnswer => unowned(a))
        }),
      productsByIds: (organizationId, ids) =>
        Effect.sync(() =>
          [...new Set(ids)].flatMap((id) => {
            const p = products.get(id)
            return p !== undefined && p.organizationId === organizationId ? [unowned(p)] : []
          })
        ),
      customersByIds: (organizationId, ids) =>
        Effect.sync(() =>
          [...new Set(ids)].flatMap((id) => {
            const c = customers.get(id)
            return c !== undefined && c.organizationId === organizationId ? [unowned(c)] : []
          })
        ),
      siteExists: (organizationId, id) => Effect.sync(() => sites.get(id)?.organizationId === organizationId)
    })
  })
)

export const MemoryEmailOutboxRepository = Layer.effect(
  Questions.EmailOutboxRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { notices } = questionTables(db)
    const owned = (organizationId: string, id: string) => {
      const n = notices.get(id)
      return n !== undefined && n.organizationId === organizationId ? n : undefined
    }
    return Questions.EmailOutboxRepository.of({
      enqueue: (notice) =>
        db.mutate(() => {
          for (const n of notices.values()) {
            if (
              n.organizationId === notice.organizationId && n.productQuestionId === notice.productQuestionId
            ) return false
          }
          notices.set(notice.id, notice)
          return true
        }),
      claimNext: (workerId, at) =>
        db.mutate(() => {
          let next: Questions.EmailNotice | undefined
          for (const n of notices.values()) {
            if (n.status !== "pending" || n.nextAttemptAt > at) continue
            if (next === undefined || byCreatedThenId(n, next) < 0) next = n
          }
          if (next === undefined) return Option.none()
          const claimed: Questions.EmailNotice = {
            ...next,
            status: "sending",
            claimedBy: workerId,
            claimedAt: at,
            attempts: next.attempts + 1
          }
          notices.set(claimed.id, claimed)
          return Option.some(claimed)
        }),
      complete: (organizationId, id, workerId, completion) =>
        db.mutate(() => {
          const n = owned(organizationId, id)
          if (n === undefined || n.status !== "sending" || n.claimedBy !== workerId) return false
          notices.set(
            id,
            completion.status === "pending"
              ? {
                ...n,
                status: "pending",
                error: completion.error,
                nextAttemptAt: completion.nextAttemptAt,
                claimedBy: null,
                claimedAt: null
              }
              : { ...n, status: completion.status, error: completion.error, finishedAt: completion.at }
          )
          return true
        }),
      failInterrupted: (claimedBefore, at, error) =>
        db.mutate(() => {
          let count = 0
          for (const n of [...notices.values()]) {
            if (n.status === "sending" && n.claimedAt !== null && n.claimedAt < claimedBefore) {
              notices.set(n.id, { ...n, status: "failed", error, finishedAt: at })
              count++
            }
          }
          return count
        }),
      deleteForQuestion: (organizationId, productQuestionId) =>
        db.mutate(() => {
          let count = 0
          for (const n of [...notices.values()]) {
            if (n.organizationId === organizationId && n.productQuestionId === productQuestionId) {
              notices.delete(n.id)
              count++
            }
          }
          return count
        }),
      listForOrganization: (organizationId) =>
        Effect.sync(() =>
          [...notices.values()].filter((n) => n.organizationId === organizationId).sort(byCreatedThenId)
        )
    })
  })
)
