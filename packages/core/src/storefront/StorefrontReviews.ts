/**
 * Shopper reviews through the storefront (shared §18, docs/DECISIONS.md §57): `POST /storefront/reviews`, the survey
 * token endpoints behind the hosted `/r/{token}` page, and the signed customer's own reviews. Every review arrives
 * the same way (`arrive`): with its provenance, the arrival rules' flags (`ArrivalRules.ts`), published at once only
 * when the review settings say so, its product's stats and `review.created` in the same unit of work.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { newCustomer } from "../catalog/Catalog.ts"
import { CatalogRepository } from "../catalog/CatalogRepository.ts"
import { customerListEndpoint } from "../catalog/CatalogLists.ts"
import { CursorKey } from "../kernel/CursorKey.ts"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { Conflict, InvalidRequest, NotFound, Unauthorized } from "../kernel/Errors.ts"
import { EventOutbox, makeEventRecorder } from "../kernel/EventOutbox.ts"
import { IdGenerator, nextIdFrom } from "../kernel/IdGenerator.ts"
import type { CustomerId, OrganizationId, ProductId, ReviewId, SurveyId } from "../kernel/Ids.ts"
import { parseListRequest } from "../kernel/ListQuery.ts"
import { textProblem } from "../kernel/Text.ts"
import { now, type Timestamp, toMillis } from "../kernel/Timestamp.ts"
import { UnitOfWork } from "../kernel/UnitOfWork.ts"
import { parseTimestampValue } from "../kernel/Filter.ts"
import { orderListEndpoint } from "../orders/OrderRules.ts"
import { OrderRepository } from "../orders/OrderRepository.ts"
import { newReview, type ReviewRecord } from "../reviews/Review.ts"
import { reviewListEndpoint } from "../reviews/ReviewLists.ts"
import { ReviewRepository } from "../reviews/ReviewRepository.ts"
import { productStatsDeltas } from "../reviews/ReviewRules.ts"
import { ReviewWriteRepository } from "../reviews/ReviewWriteRepository.ts"
import { ReviewAutomationRepository } from "../setup/ReviewAutomationRepository.ts"
import { defaultReviewSettings } from "../setup/ReviewSettings.ts"
import { skipSurvey, surveyReasons } from "../surveys/SurveyRules.ts"
import { SurveyRepository } from "../surveys/SurveyRepository.ts"
import {
  arrivalFlags,
  arrivalThresholds,
  comparableText,
  hasText,
  publishedOnArrival,
  splitAuthorName,
  submitSecondsOf,
  USER_AGENT_MAX_LENGTH
} from "./ArrivalRules.ts"
import { verifyCustomerSignature } from "./CustomerSignature.ts"
import { makeShopperLookups } from "./ShopperLookups.ts"
import { type CustomerReviewPage, storefrontLimits, type StorefrontSurvey } from "./Storefront.ts"
import { CurrentStorefrontCaller, type StorefrontCaller } from "./StorefrontCaller.ts"
import type {
  SignedCustomerQuery,
  StorefrontReviewSubmission,
  StorefrontReviewSubmitted,
  SubmissionContext,
  SurveyReviewSubmission,
  SurveyReviewSubmitted
} from "./StorefrontRequests.ts"
import { storefrontCustomerReviewListEndpoint, toCustomerReview } from "./StorefrontRules.ts"

/** The client address of an in-process call without a peer: no address at all, so it is stored as none. */
const UNKNOWN_ADDRESS = "unknown"

/** Orders of one customer read for the verified-buyer check, at most (pages of 100). */
const MAX_ORDERS_CHECKED = 1_000

/** A review as the shopper wrote it, before the arrival rules judge it. */
interface Draft {
  readonly productId: ProductId
  readonly rating: number
  readonly title: string | null
  readonly body: string | null
  readonly verifiedBuyer: boolean
}

/** Who wrote the drafts and where they came from. */
interface Provenance {
  readonly customerId: CustomerId
  readonly surveyId: SurveyId | null
  readonly ipAddress: string | null
  readonly userAgent: string | null
  readonly browserFingerprint: string | null
  readonly submitSeconds: number | null
}

export interface CustomerReviewParams {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const isEmail = Schema.is(EmailAddress)

/** A `User-Agent` header as stored: cut to its limit, none when it is not storable text. */
const userAgentOf = (header: string | undefined): string | null => {
  if (header === undefined || header === "") return null
  const cut = header.slice(0, USER_AGENT_MAX_LENGTH)
  return textProblem(cut) === undefined ? cut : null
}

export class StorefrontReviews extends Context.Service<StorefrontReviews, {
  /** `POST /storefront/reviews` → 202 `{id, published}`. */
  readonly submitReview: (
    input: StorefrontReviewSubmission,
    context: SubmissionContext
  ) => Effect.Effect<StorefrontReviewSubmitted, InvalidRequest | Unauthorized, CurrentStorefrontCaller>
  /** `GET /storefront/surveys/{token}`: what the hosted page shows; an unknown or expired token is a 404. */
  readonly survey: (token: string) => Effect.Effect<StorefrontSurvey, NotFound, CurrentStorefrontCaller>
  /** `POST /storefront/surveys/{token}/reviews` → 201: verified reviews of the survey's products. */
  readonly submitSurveyReviews: (
    token: string,
    input: SurveyReviewSubmission,
    context: SubmissionContext
  ) => Effect.Effect<SurveyReviewSubmitted, InvalidRequest | NotFound | Conflict, CurrentStorefrontCaller>
  /** `GET /storefront/customer/reviews`: the signed customer's reviews, pending ones included, newest first. */
  readonly customerReviews: (
    signed: SignedCustomerQuery,
    params: CustomerReviewParams
  ) => Effect.Effect<CustomerReviewPage, InvalidRequest | Unauthorized, CurrentStorefrontCaller>
}>()("feedback/StorefrontReviews") {
  static readonly layer = Layer.effect(
    StorefrontReviews,
    Effect.gen(function*() {
      const catalog = yield* CatalogRepository
      const reviews = yield* ReviewRepository
      const writes = yield* ReviewWriteRepository
      const automation = yield* ReviewAutomationRepository
      const orders = yield* OrderRepository
      const surveys = yield* SurveyRepository
      const uow = yield* UnitOfWork
      const ids = yield* IdGenerator
      const key = yield* CursorKey
      const events = makeEventRecorder(yield* EventOutbox, ids)
      const { firstWhere, productOf } = makeShopperLookups(catalog, key)

      /** The lower-cased email a valid signed call names; undefined for an unsigned call. */
      const signedEmail = (caller: StorefrontCaller, signed: SignedCustomerQuery) =>
        Effect.gen(function*() {
          const { customerEmail, signature, timestamp } = signed
          const given = [customerEmail, timestamp, signature].filter((v) => v !== undefined).length
          if (given === 0) return undefined
          if (customerEmail === undefined || timestamp === undefined || signature === undefined) {
            return yield* InvalidRequest.single(
              "query.signature",
              "a signed call sends customerEmail, timestamp and signature together"
            )
          }
          if (!isEmail(customerEmail)) {
            return yield* InvalidRequest.single("query.customerEmail", "must be an email address")
          }
          const seconds = Math.floor(toMillis(yield* now) / 1_000)
          const verdict = verifyCustomerSignature(
            caller.signingSecret,
            { publishableKey: caller.key, customerEmail, timestamp, signature },
            seconds
          )
          if (verdict._tag === "Invalid") return yield* Effect.fail(Unauthorized.customerSignature())
          return customerEmail.toLowerCase()
        })

      const listRequest = (
        organizationId: OrganizationId,
        endpoint: typeof reviewListEndpoint | typeof orderListEndpoint,
        filter: object,
        limit: number,
        cursor?: string
      ) =>
        Effect.orDie(Effect.fromResult(
          parseListRequest({ filter: JSON.stringify(filter), limit, cursor }, endpoint, { key, organizationId })
        ))

      /** The customer of this (lower-cased) email, created with the shopper's name when there is none yet. */
      const customerOf = (organizationId: OrganizationId, email: string, authorName: string, at: Timestamp) =>
        Effect.gen(function*() {
          const fresh = newCustomer(yield* nextIdFrom<CustomerId>(ids), at, { email, ...splitAuthorName(authorName) })
          const found = yield* writes.ensureCustomers(organizationId, [fresh])
          const id = found.get(email) ?? fresh.id
          // Announced like every customer creation (docs/DECISIONS.md §13); one a concurrent writer made is its own.
          if (id === fresh.id) yield* events.record(organizationId, "customer.updated", fresh)
          return id
        })

      /** Whether the customer has an order, not cancelled, with the product (shared §18's verified buyer). */
      const boughtProduct = (organizationId: OrganizationId, customerId: CustomerId, productId: ProductId) =>
        Effect.gen(function*() {
          let cursor: string | undefined
          for (let read = 0; read < MAX_ORDERS_CHECKED; read += 100) {
            const request = yield* listRequest(
              organizationId,
              orderListEndpoint,
              { "customer.id": customerId, status: { $ne: "cancelled" } },
              100,
              cursor
            )
            const page = yield* orders.listOrders(organizationId, request)
            if (page.data.some((o) => o.lines.some((l) => l.productId === productId))) return true
            if (page.nextCursor === null) return false
            cursor = page.nextCursor
          }
          return false
        })

      /** The newest reviews of a customer or a fingerprint, whose text a new review must not repeat. */
      const recentTexts = (organizationId: OrganizationId, filter: object) =>
        Effect.flatMap(
          listRequest(organizationId, reviewListEndpoint, filter, arrivalThresholds.duplicateWindow),
          (request) => Effect.map(reviews.list(organizationId, request), (page) => page.data)
        )

      /**
       * Stores the drafts as arrived reviews: flags from the arrival rules (counts read before any of them is written,
       * so a submission's own reviews never collide with each other), published per the review settings, the products'
       * stats and `review.created` for each, in the caller's unit of work.
       */
      const arrive = (
        organizationId: OrganizationId,
        drafts: ReadonlyArray<Draft>,
        from: Provenance,
        at: Timestamp
      ) =>
        Effect.gen(function*() {
          const settings = Option.getOrElse(
            yield* automation.reviewSettings(organizationId),
            () => defaultReviewSettings
          )
          const counts = yield* reviews.valueCounts(organizationId, {
            browserFingerprints: from.browserFingerprint === null ? [] : [from.browserFingerprint],
            ipAddresses: from.ipAddress === null ? [] : [from.ipAddress]
          })
          const earlier = [
            ...(yield* recentTexts(organizationId, { "customer.id": from.customerId })),
            ...(from.browserFingerprint === null
              ? []
              : yield* recentTexts(organizationId, { browserFingerprint: from.browserFingerprint }))
          ].filter(hasText).map((r) => ({ id: r.id as string, text: comparableText(r) }))
          const records: Array<ReviewRecord> = []
          for (const draft of drafts) {
            const id = yield* nextIdFrom<ReviewId>(ids)
            const text = comparableText(draft)
            const duplicateOf = hasText(draft) ? earlier.find((e) => e.text === text)?.id ?? null : null
            const flags = arrivalFlags({
              duplicateOf,
              sameIpAddress: from.ipAddress === null ? 0 : counts.ipAddress.get(from.ipAddress) ?? 0,
              sameFingerprint: from.browserFingerprint === null
                ? 0
                : counts.browserFingerprint.get(from.browserFingerprint) ?? 0,
              submitSeconds: from.submitSeconds
            })
            const flagged = flags.length > 0
            records.push(newReview(id, at, {
              productId: draft.productId,
              rating: draft.rating,
              title: draft.title,
              body: draft.body,
              customerId: from.customerId,
              surveyId: from.surveyId,
              verifiedBuyer: draft.verifiedBuyer,
              flagged,
              flags,
              published: publishedOnArrival(settings, { ...draft, flagged }),
              ipAddress: from.ipAddress,
              userAgent: from.userAgent,
              browserFingerprint: from.browserFingerprint,
              submitSeconds: from.submitSeconds
            }))
            if (hasText(draft)) earlier.push({ id, text })
          }
          yield* writes.insertReviews(organizationId, records)
          yield* writes.addProductStats(organizationId, productStatsDeltas(records))
          yield* events.recordAll(organizationId, records.map((data) => ({ event: "review.created", data })))
          return records
        })

      const provenanceOf = (
        caller: StorefrontCaller,
        input: { readonly fingerprint?: string | undefined; readonly formRenderedAt?: string | undefined },
        context: SubmissionContext,
        at: Timestamp
      ) => {
        const rendered = input.formRenderedAt === undefined ? undefined : parseTimestampValue(input.formRenderedAt)
        return {
          ipAddress: caller.clientAddress === UNKNOWN_ADDRESS ? null : caller.clientAddress,
          userAgent: userAgentOf(context.userAgent),
          browserFingerprint: input.fingerprint ?? null,
          submitSeconds: submitSecondsOf(rendered === undefined ? undefined : toMillis(rendered), toMillis(at))
        }
      }

      const submitReview = Effect.fn("StorefrontReviews.submitReview")(
        function*(input: StorefrontReviewSubmission, context: SubmissionContext) {
          const caller = yield* CurrentStorefrontCaller
          const organizationId = caller.organization.id
          const signed = yield* signedEmail(caller, context.signed)
          if (signed !== undefined && input.email !== undefined && input.email.toLowerCase() !== signed) {
            return yield* InvalidRequest.single("body.email", "must be the signed customer's email, or left out")
          }
          const email = signed ?? input.email?.toLowerCase()
          if (email === undefined) {
            return yield* InvalidRequest.single("body.email", "is required unless the call is signed for a customer")
          }
          return yield* uow.transaction(Effect.gen(function*() {
            const productId = yield* productOf(organizationId, input)
            const at = yield* now
            const customerId = yield* customerOf(organizationId, email, input.authorName, at)
            const verifiedBuyer = signed !== undefined && (yield* boughtProduct(organizationId, customerId, productId))
            const [review] = yield* arrive(
              organizationId,
              [{
                productId,
                rating: input.rating,
                title: input.title ?? null,
                body: input.body ?? null,
                verifiedBuyer
              }],
              { customerId, surveyId: null, ...provenanceOf(caller, input, context, at) },
              at
            )
            return { id: review!.id, published: review!.published }
          }))
        }
      )

      /** The survey of a token that has not expired; any other token is as absent as an unknown one. */
      const liveSurvey = (organizationId: OrganizationId, token: string, at: Timestamp) =>
        Effect.flatMap(
          surveys.lockSurveyByToken(organizationId, token),
          (found) =>
            Option.isNone(found) || toMillis(found.value.survey.expiresAt) <= toMillis(at)
              ? Effect.fail(NotFound.of("survey"))
              : Effect.succeed(found.value)
        )

      const survey = Effect.fn("StorefrontReviews.survey")(function*(token: string) {
        const { organization } = yield* CurrentStorefrontCaller
        const organizationId = organization.id
        const stored = yield* liveSurvey(organizationId, token, yield* now)
        const { survey } = stored
        const customer = yield* catalog.findCustomer(organizationId, survey.customerId)
        const products = yield* catalog.findProducts(organizationId, survey.products.map((p) => p.productId))
        const byId = new Map(products.map((p) => [p.id as string, p]))
        return {
          id: survey.id,
          status: survey.status,
          expiresAt: survey.expiresAt,
          customer: { firstName: Option.match(customer, { onNone: () => null, onSome: (c) => c.firstName }) },
          // A product deleted since the order was placed can no longer be reviewed, so the page does not offer it.
          products: survey.products.flatMap((p) => {
            const product = byId.get(p.productId)
            return product === undefined ? [] : [{
              id: product.id,
              title: product.title,
              imageUrl: product.imageUrl,
              url: product.url,
              reviewed: p.reviewId !== null
            }]
          })
        }
      })

      const submitSurveyReviews = Effect.fn("StorefrontReviews.submitSurveyReviews")(
        function*(token: string, input: SurveyReviewSubmission, context: SubmissionContext) {
          const caller = yield* CurrentStorefrontCaller
          const organizationId = caller.organization.id
          return yield* uow.transaction(Effect.gen(function*() {
            const at = yield* now
            const stored = yield* liveSurvey(organizationId, token, at)
            const { survey } = stored
            if (survey.status === "cancelled") {
              return yield* new Conflict({ message: "This survey was cancelled; it takes no reviews." })
            }
            const slots = new Map(survey.products.map((p) => [p.productId as string, p]))
            const seen = new Set<string>()
            for (const [i, r] of input.reviews.entries()) {
              const slot = slots.get(r.productId)
              if (slot === undefined) {
                return yield* InvalidRequest.single(`body.reviews[${i}].productId`, "is not a product of this survey")
              }
              if (slot.reviewId !== null || seen.has(r.productId)) {
                return yield* new Conflict({
                  message: `Product ${r.productId} already has its review through this survey.`
                })
              }
              seen.add(r.productId)
            }
            const existing = yield* catalog.findProducts(organizationId, input.reviews.map((r) => r.productId))
            const present = new Set(existing.map((p) => p.id as string))
            for (const [i, r] of input.reviews.entries()) {
              if (!present.has(r.productId)) {
                return yield* InvalidRequest.single(`body.reviews[${i}].productId`, "this product no longer exists")
              }
            }
            const records = yield* arrive(
              organizationId,
              input.reviews.map((r) => ({
                productId: r.productId,
                rating: r.rating,
                title: r.title ?? null,
                body: r.body ?? null,
                verifiedBuyer: true
              })),
              { customerId: survey.customerId, surveyId: survey.id, ...provenanceOf(caller, input, context, at) },
              at
            )
            const reviewOf = new Map(records.map((r) => [r.productId as string, r.id]))
            const products = survey.products.map((p) => ({
              ...p,
              reviewId: p.reviewId ?? reviewOf.get(p.productId) ?? null
            }))
            const completed = products.every((p) => p.reviewId !== null)
            const updated = {
              ...stored,
              survey: {
                ...survey,
                products,
                ...(completed ? { status: "completed" as const, completedAt: at } : {}),
                updatedAt: at
              }
            }
            // A completed survey sends nothing more: its pending reminders end `skipped` now (docs/DECISIONS.md §48).
            yield* surveys.saveSurveys(organizationId, [
              completed ? skipSurvey(updated, surveyReasons.completed, at) ?? updated : updated
            ])
            return { reviews: records.map((r) => ({ id: r.id, productId: r.productId, published: r.published })) }
          }))
        }
      )

      const customerReviews = Effect.fn("StorefrontReviews.customerReviews")(
        function*(signed: SignedCustomerQuery, params: CustomerReviewParams) {
          const caller = yield* CurrentStorefrontCaller
          const organizationId = caller.organization.id
          const email = yield* signedEmail(caller, signed)
          if (email === undefined) {
            return yield* Effect.fail(Unauthorized.customerSignature())
          }
          const limit = params.limit ?? storefrontLimits.defaultLimit
          if (!Number.isInteger(limit) || limit < 1 || limit > storefrontLimits.maxLimit) {
            return yield* InvalidRequest.single(
              "query.limit",
              `must be a whole number from 1 to ${storefrontLimits.maxLimit}`
            )
          }
          const customer = yield* firstWhere(
            organizationId,
            customerListEndpoint,
            { email },
            "query.customerEmail",
            (r) => catalog.listCustomers(organizationId, r)
          )
          // A customer the organization has never seen has no reviews (and learns nothing more from an empty page).
          if (customer === undefined) return { data: [], nextCursor: null }
          const request = yield* Effect.fromResult(parseListRequest(
            {
              filter: JSON.stringify({ "customer.id": customer.id }),
              limit,
              cursor: params.cursor,
              include: storefrontCustomerReviewListEndpoint.includes
            },
            storefrontCustomerReviewListEndpoint,
            { key, organizationId }
          ))
          const page = yield* reviews.list(organizationId, request)
          return { data: page.data.map(toCustomerReview), nextCursor: page.nextCursor }
        }
      )

      return StorefrontReviews.of({ submitReview, survey, submitSurveyReviews, customerReviews })
    })
  )
}
