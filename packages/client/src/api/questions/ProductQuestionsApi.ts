/**
 * Product questions and their answers (spec: Product questions). Lists follow `docs/DECISIONS.md` §4 plus `answered`;
 * bodies are strict, so `body` in a PATCH (the question text is not editable) is a 400 naming it.
 */
import { Kernel, Questions } from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { answeredParam, includeParam, listQuery, pageOf } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc, docGroup } from "../Describe.ts"

const include = includeParam(Questions.productQuestionListEndpoint.includes)
const answerParams = { id: Kernel.ProductQuestionId, answerId: Kernel.ProductQuestionAnswerId }

/** The list parameters of `docs/DECISIONS.md` §4 plus `answered`. */
const ProductQuestionListQuery = Schema.Struct({
  ...listQuery(Questions.productQuestionListEndpoint),
  include,
  answered: answeredParam
})

export const ProductQuestionPage = pageOf(Questions.ProductQuestion)

export const ProductQuestionAnswerList = Schema.Struct({ data: Schema.Array(Questions.ProductQuestionAnswer) })
  .annotate({
    identifier: "ProductQuestionAnswerList"
  })

const idParams = { id: Kernel.ProductQuestionId }
const includeQuery = Schema.Struct({ include })

export class ProductQuestionsApi extends HttpApiGroup.make("productQuestions")
  .add(
    HttpApiEndpoint.get("list", "/product-questions", {
      query: ProductQuestionListQuery,
      success: ProductQuestionPage,
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "List product questions",
        "Shopper questions, newest first by default, published or not; `answered` keeps only answered (true) or unanswered (false) ones, `include` adds the product or the answers."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.post("create", "/product-questions", {
      payload: Questions.CreateProductQuestion,
      success: Questions.ProductQuestionRecord.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    })
      .annotateMerge(doc(
        "Record a product question",
        "Records a question a shopper asked about a product (for example from your own storefront form). It is unpublished until you publish it. Fires `productQuestion.created`."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.get("get", "/product-questions/:id", {
      params: idParams,
      query: includeQuery,
      success: Questions.ProductQuestion,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Get a product question",
        "One question with its answer counts; `include` adds the product or the answers."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.patch("update", "/product-questions/:id", {
      params: idParams,
      query: includeQuery,
      payload: Questions.UpdateProductQuestion,
      success: Questions.ProductQuestion,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Moderate a product question",
        "Publishes or hides the question, or replaces its `metadata`; only sent fields change and the shopper's text is not editable. Fires `productQuestion.updated`, unless nothing changed."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("delete", "/product-questions/:id", {
      params: idParams,
      success: Questions.ProductQuestionRecord,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Delete a product question",
        "Deletes the question with its answers and answers it as it was. Fires `productQuestion.deleted`."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.get("listAnswers", "/product-questions/:id/answers", {
      params: idParams,
      success: ProductQuestionAnswerList,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "List a question's answers",
        "Every answer to the question, published or not, oldest first."
      ))
      .pipe(requires("reviews:read")),
    HttpApiEndpoint.post("createAnswer", "/product-questions/:id/answers", {
      params: idParams,
      payload: Questions.CreateProductQuestionAnswer,
      success: Questions.ProductQuestionAnswer.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Answer a product question",
        "Adds an answer as the store. A published first answer emails the asker once, when they left an address. Fires `productQuestionAnswer.created`."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.patch("updateAnswer", "/product-questions/:id/answers/:answerId", {
      params: answerParams,
      payload: Questions.UpdateProductQuestionAnswer,
      success: Questions.ProductQuestionAnswer,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(doc(
        "Edit an answer",
        "Changes `body`, `published`, `authorName` or `metadata`; only sent fields change. Publishing or " +
          "hiding keeps the question's counts and `answeredAt` current; publishing the question's first published " +
          "answer emails the asker, once per question. Fires `productQuestionAnswer.updated`, unless nothing changed."
      ))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("deleteAnswer", "/product-questions/:id/answers/:answerId", {
      params: answerParams,
      success: Questions.ProductQuestionAnswer,
      error: NotFoundResponse
    })
      .annotateMerge(doc(
        "Delete an answer",
        "Deletes the answer and returns it as it was; the question's counts and `answeredAt` follow. " +
          "Fires `productQuestionAnswer.deleted`."
      ))
      .pipe(requires("reviews:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(docGroup(
    "Product questions",
    "Shopper questions about products: list, record, moderate and delete them, and answer as the store. The first published answer emails the asker once when they left an address."
  ))
{}
