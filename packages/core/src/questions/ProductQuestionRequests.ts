/** What the admin API accepts for product questions and answers (spec: Product questions; docs/DECISIONS.md §6). */
import { Schema } from "effect"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { CustomerId, ProductId, SiteId } from "../kernel/Ids.ts"
import { MetadataInput } from "../kernel/Metadata.ts"
import { characterCount, textProblem } from "../kernel/Text.ts"
import { ANSWER_BODY_MAX_CHARACTERS, QUESTION_BODY_MAX_CHARACTERS } from "./ProductQuestion.ts"

/**
 * Text of 1..max characters (code points), not only blanks, storable. The cheap length bound (a code point is at
 * most two code units) aborts first, so an over-long value is never scanned.
 */
const Text = (max: number, what: string) =>
  Schema.String.pipe(Schema.check(
    Schema.isMaxLength(2 * max, { message: `${what} is longer than ${max} characters` }).abort(),
    Schema.makeFilter((s: string) => {
      const problem = textProblem(s)
      if (problem !== undefined) return problem
      if (s.trim() === "") return `${what} must not be empty`
      const n = characterCount(s)
      return n <= max ? undefined : `${what} is ${n} characters long; at most ${max} are allowed`
    }, {
      expected: `${what} of 1 to ${max} characters`,
      // Counted in code points, as JSON Schema counts them; `\S` as `trim` reads blanks.
      toJsonSchema: () => ({ minLength: 1, maxLength: max, pattern: "\\S" })
    })
  ))

export const QuestionBody = Text(QUESTION_BODY_MAX_CHARACTERS, "the question")
export const AnswerBody = Text(ANSWER_BODY_MAX_CHARACTERS, "the answer")
export const PersonName = Text(200, "the name")

/**
 * `POST /product-questions`. Fields the spec marks "or null" take null as "none", exactly like omitting them.
 * `notifyByEmail` is not in the spec's table; it is accepted because its default (true when an address is given,
 * docs/DECISIONS.md §6) implies a caller may turn it off.
 */
export const CreateProductQuestion = Schema.Struct({
  productId: ProductId,
  body: QuestionBody,
  askerName: Schema.optionalKey(Schema.NullOr(PersonName)),
  askerEmail: Schema.optionalKey(Schema.NullOr(EmailAddress)),
  siteId: Schema.optionalKey(Schema.NullOr(SiteId)),
  customerId: Schema.optionalKey(Schema.NullOr(CustomerId)),
  published: Schema.optionalKey(Schema.Boolean),
  notifyByEmail: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "CreateProductQuestion" })
export type CreateProductQuestion = typeof CreateProductQuestion.Type

/**
 * `PATCH /product-questions/{id}`: only sent fields change. `askerName: null` makes the question anonymous, an
 * omitted `askerName` leaves it. The question text is not editable, so `body` is an unknown field (400).
 */
export const UpdateProductQuestion = Schema.Struct({
  published: Schema.optionalKey(Schema.Boolean),
  askerName: Schema.optionalKey(Schema.NullOr(PersonName)),
  metadata: Schema.optionalKey(MetadataInput)
}).annotate({ identifier: "UpdateProductQuestion" })
export type UpdateProductQuestion = typeof UpdateProductQuestion.Type

/** `POST /product-questions/{id}/answers`. `published` defaults to true. */
export const CreateProductQuestionAnswer = Schema.Struct({
  body: AnswerBody,
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput),
  authorName: Schema.optionalKey(PersonName)
}).annotate({ identifier: "CreateProductQuestionAnswer" })
export type CreateProductQuestionAnswer = typeof CreateProductQuestionAnswer.Type

/** PATCH of an answer (docs/DECISIONS.md §13): only sent fields change; `metadata` is replaced wholesale. */
export const UpdateProductQuestionAnswer = Schema.Struct({
  body: Schema.optionalKey(AnswerBody),
  published: Schema.optionalKey(Schema.Boolean),
  metadata: Schema.optionalKey(MetadataInput),
  authorName: Schema.optionalKey(PersonName)
}).annotate({ identifier: "UpdateProductQuestionAnswer" })
export type UpdateProductQuestionAnswer = typeof UpdateProductQuestionAnswer.Type
