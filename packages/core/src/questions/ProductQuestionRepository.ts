/** Storage of product questions and their answers, and the catalog reads their use-cases need. */
import { Context, type Effect, type Option } from "effect"
import type { Customer, Product } from "../catalog/Catalog.ts"
import type {
  CustomerId,
  OrganizationId,
  ProductId,
  ProductQuestionAnswerId,
  ProductQuestionId,
  SiteId
} from "../kernel/Ids.ts"
import type { ListRequest, Page } from "../kernel/ListQuery.ts"
import type { ProductQuestionAnswer, ProductQuestionRecord } from "./ProductQuestion.ts"
import type { Timestamp } from "../kernel/Timestamp.ts"

export type OwnedQuestion = ProductQuestionRecord & { readonly organizationId: OrganizationId }
export type OwnedAnswer = ProductQuestionAnswer & { readonly organizationId: OrganizationId }

/** `answered=true|false` of the list: at least one published answer, or none. */
export type AnsweredFilter = boolean | undefined

export class ProductQuestionRepository extends Context.Service<ProductQuestionRepository, {
  /**
   * One page of the organization's questions: filter (`productQuestionFilterCatalog`, product.* and customer.*
   * read from the related records), search over body, askerName, askerEmail and product title, keyset order.
   */
  readonly list: (
    organizationId: OrganizationId,
    request: ListRequest<string>,
    answered: AnsweredFilter
  ) => Effect.Effect<Page<ProductQuestionRecord>>
  /**
   * The question. With `forUpdate` it is locked until the unit of work ends, so read-modify-write use-cases
   * (moderation, answer counts) serialize per question.
   */
  readonly findById: (
    organizationId: OrganizationId,
    id: ProductQuestionId,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Option.Option<ProductQuestionRecord>>
  readonly insert: (question: OwnedQuestion) => Effect.Effect<void>
  /** Writes every field except `notifiedAt` (which only `markNotified` sets). */
  readonly update: (question: OwnedQuestion) => Effect.Effect<void>
  /** Sets `notifiedAt` once; a later call keeps the first value. False when the question is gone. */
  readonly markNotified: (
    organizationId: OrganizationId,
    id: ProductQuestionId,
    at: Timestamp
  ) => Effect.Effect<boolean>
  /**
   * Deletes the question and all its answers, and blanks `askerEmail` in the domain events already recorded about
   * it, so no copy of the address stays in the store. The deleted question, or none.
   */
  readonly delete: (
    organizationId: OrganizationId,
    id: ProductQuestionId
  ) => Effect.Effect<Option.Option<ProductQuestionRecord>>
  readonly insertAnswer: (answer: OwnedAnswer) => Effect.Effect<void>
  /** One answer of the question, or none (an answer of another question or organization is none). */
  readonly findAnswer: (
    organizationId: OrganizationId,
    questionId: ProductQuestionId,
    answerId: ProductQuestionAnswerId
  ) => Effect.Effect<Option.Option<ProductQuestionAnswer>>
  /** Writes every editable field of an existing answer (body, published, moderatedAt, authorName, metadata, updatedAt). */
  readonly updateAnswer: (answer: OwnedAnswer) => Effect.Effect<void>
  readonly deleteAnswer: (organizationId: OrganizationId, answerId: ProductQuestionAnswerId) => Effect.Effect<void>
  /** Every answer of the questions, oldest first (createdAt, then id). One query however many questions. */
  readonly answersOf: (
    organizationId: OrganizationId,
    questionIds: ReadonlyArray<ProductQuestionId>
  ) => Effect.Effect<ReadonlyArray<ProductQuestionAnswer>>
  /** The organization's products among `ids`, in any order. One query. */
  readonly productsByIds: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<ProductId>
  ) => Effect.Effect<ReadonlyArray<Product>>
  /** The organization's customers among `ids`, in any order. One query. */
  readonly customersByIds: (
    organizationId: OrganizationId,
    ids: ReadonlyArray<CustomerId>
  ) => Effect.Effect<ReadonlyArray<Customer>>
  readonly siteExists: (organizationId: OrganizationId, id: SiteId) => Effect.Effect<boolean>
}>()("feedback/ProductQuestionRepository") {}
