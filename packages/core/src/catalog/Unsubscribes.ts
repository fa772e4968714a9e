/**
 * Unsubscribing from review emails (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe"). Every review email links to
 * `{public base URL}/u/{token}`, the token bound to its customer; the page there (GET) asks to confirm, and a POST
 * (the page's button, or a mail client's one-click `List-Unsubscribe-Post`) sets the customer's `emailOptOut` with
 * `emailOptOutSource: "unsubscribe_link"` and fires `customer.updated`. The token is the only credential: no key,
 * no organization in the URL. A token of the wrong form, or one no customer has, is NotFound, indistinguishably.
 */
import { Context, Effect, Layer, Option } from "effect"
import { NotFound } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import type { CustomerId, OrganizationId } from "../kernel/Ids.ts"
import { IdGenerator } from "../kernel/IdGenerator.ts"
import { now } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { OrganizationRepository } from "../organizations/OrganizationRepository.ts"
import { publicBaseUrl, SetupConfig } from "../setup/SetupConfig.ts"
import { CatalogRepository } from "./CatalogRepository.ts"
import { UnsubscribeRepository, type UnsubscribeTokenOwner } from "./UnsubscribeRepository.ts"
import { isUnsubscribeToken, newUnsubscribeToken, UNSUBSCRIBE_LINK_SOURCE, unsubscribeUrl } from "./UnsubscribeToken.ts"

/** What the page at `/u/{token}` may show: whose list, and the address in a form its owner recognises. */
export interface UnsubscribeState {
  readonly organizationName: string
  /** The customer's address with most of its local part hidden (`a***@example.com`). */
  readonly maskedEmail: string
  readonly optedOut: boolean
}

/** Enough of an address for its owner to recognise it, not enough to harvest it from a forwarded link. */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf("@")
  if (at <= 0) return "***"
  return `${email.slice(0, 1)}***${email.slice(at)}`
}

const unknownLink = () => new NotFound({ message: "This unsubscribe link is not valid.", resource: "unsubscribe link" })

export class Unsubscribes extends Context.Service<Unsubscribes, {
  /**
   * The customer's unsubscribe token, made and stored on first use. For the code that renders an email (the flow
   * engine), acting for the organization: no caller, no permission.
   */
  readonly tokenFor: (organizationId: OrganizationId, customerId: CustomerId) => Effect.Effect<string>
  /** `unsubscribe.url` of the customer's emails: `{PUBLIC_API_BASE_URL or the server's own URL}/u/{token}`. */
  readonly urlFor: (organizationId: OrganizationId, customerId: CustomerId) => Effect.Effect<string>
  /** `urlFor` of each customer, tokens made as needed in one write; a customer that does not exist is left out. */
  readonly urlsFor: (
    organizationId: OrganizationId,
    customerIds: ReadonlyArray<CustomerId>
  ) => Effect.Effect<ReadonlyMap<CustomerId, string>>
  /** GET /u/{token}: what the confirmation page shows. */
  readonly describe: (token: string) => Effect.Effect<UnsubscribeState, NotFound>
  /**
   * POST /u/{token}: opts the customer out of email (`emailOptOutSource: "unsubscribe_link"`) and fires
   * `customer.updated`, in one unit of work; a second POST changes nothing and fires nothing.
   */
  readonly unsubscribe: (token: string) => Effect.Effect<UnsubscribeState, NotFound>
}>()("feedback/Unsubscribes") {
  static readonly layer = Layer.effect(
    Unsubscribes,
    Effect.gen(function*() {
      const repo = yield* UnsubscribeRepository
      const catalog = yield* CatalogRepository
      const organizations = yield* OrganizationRepository
      const uow = yield* UnitOfWork
      const baseUrl = publicBaseUrl(yield* SetupConfig)
      const events = makeEventRecorder(yield* EventOutbox, yield* IdGenerator)

      const tokensFor = (organizationId: OrganizationId, customerIds: ReadonlyArray<CustomerId>) =>
        Effect.flatMap(
          now,
          (at) =>
            repo.ensureTokens(
              organizationId,
              customerIds.map((customerId) => ({ customerId, candidate: newUnsubscribeToken() })),
              at
            )
        )

      const tokenFor = Effect.fn("Unsubscribes.tokenFor")(
        function*(organizationId: OrganizationId, customerId: CustomerId) {
          const token = (yield* tokensFor(organizationId, [customerId])).get(customerId)
          if (token === undefined) return yield* Effect.die(new Error(`no customer ${customerId} in the organization`))
          return token
        }
      )

      const urlFor = Effect.fn("Unsubscribes.urlFor")(
        function*(organizationId: OrganizationId, customerId: CustomerId) {
          return unsubscribeUrl(baseUrl, yield* tokenFor(organizationId, customerId))
        }
      )

      const urlsFor = (organizationId: OrganizationId, customerIds: ReadonlyArray<CustomerId>) =>
        Effect.map(
          tokensFor(organizationId, customerIds),
          (tokens) => new Map([...tokens].map(([id, token]) => [id, unsubscribeUrl(baseUrl, token)]))
        )

      /** The token's owner; any token that is not of the form or not stored is the same NotFound. */
      const ownerOf = (token: string): Effect.Effect<UnsubscribeTokenOwner, NotFound> =>
        isUnsubscribeToken(token)
          ? Effect.flatMap(
            repo.findToken(token),
            Option.match({ onNone: () => Effect.fail(unknownLink()), onSome: Effect.succeed })
          )
          : Effect.fail(unknownLink())

      const stateOf = (owner: UnsubscribeTokenOwner, email: string | null, optedOut: boolean) =>
        Effect.map(organizations.findById(owner.organizationId), (organization): UnsubscribeState => ({
          organizationName: Option.match(organization, { onNone: () => "", onSome: (o) => o.name }),
          maskedEmail: email === null ? "" : maskEmail(email),
          optedOut
        }))

      const describe = Effect.fn("Unsubscribes.describe")(function*(token: string) {
        const owner = yield* ownerOf(token)
        const customer = yield* Effect.flatMap(
          catalog.findCustomer(owner.organizationId, owner.customerId),
          Option.match({
            onNone: () => Effect.fail(unknownLink()),
            onSome: Effect.succeed
          })
        )
        return yield* stateOf(owner, customer.email, customer.emailOptOut)
      })

      const unsubscribe = Effect.fn("Unsubscribes.unsubscribe")(function*(token: string) {
        return yield* uow.transaction(Effect.gen(function*() {
          const owner = yield* ownerOf(token)
          const outcome = yield* repo.optOut(
            owner.organizationId,
            owner.customerId,
            UNSUBSCRIBE_LINK_SOURCE,
            yield* now
          )
          if (outcome._tag === "NotFound") return yield* unknownLink()
          if (outcome._tag === "OptedOut") {
            yield* events.record(owner.organizationId, "customer.updated", outcome.customer)
          }
          return yield* stateOf(owner, outcome.customer.email, true)
        }))
      })

      return Unsubscribes.of({ tokenFor, urlFor, urlsFor, describe, unsubscribe })
    })
  )
}
