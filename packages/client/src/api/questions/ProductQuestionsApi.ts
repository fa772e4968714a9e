/**
 * Product questions and their answers (spec: Product questions). Lists follow `docs/DECISIONS.md` §4 plus `answered`;
 * bodies are strict, so `body` in a PATCH (the question text is not editable) is a 400 naming it.
 */
import {
  CreateProductQuestion,
  CreateProductQuestionAnswer,
  ProductQuestion,
  ProductQuestionAnswer,
  ProductQuestionAnswerId,
  ProductQuestionId,
  productQuestionListEndpoint,
  ProductQuestionRecord,
  UpdateProductQuestion,
  UpdateProductQuestionAnswer
} from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { InvalidRequestResponse, NotFoundResponse } from "../ErrorResponses.ts"
import { answeredParam, includeParam, listQuery } from "../ListParams.ts"
import { requires, SecretKeyAuth } from "../Security.ts"

const include = includeParam(productQuestionListEndpoint.includes)
const answerParams = { id: ProductQuestionId, answerId: ProductQuestionAnswerId }

/** The list parameters of `docs/DECISIONS.md` §4 plus `answered`. */
export const ProductQuestionListQuery = Schema.Struct({
  ...listQuery(productQuestionListEndpoint),
  include,
  answered: answeredParam
})

export const ProductQuestionPage = Schema.Struct({
  data: Schema.Array(ProductQuestion),
  nextCursor: Schema.NullOr(Schema.String)
})

export const ProductQuestionAnswerList = Schema.Struct({ data: Schema.Array(ProductQuestionAnswer) })

const idParams = { id: ProductQuestionId }
const includeQuery = Schema.Struct({ include })

export class ProductQuestionsApi extends HttpApiGroup.make("productQuestions")
  .add(
    HttpApiEndpoint.get("list", "/product-questions", {
      query: ProductQuestionListQuery,
      success: ProductQuestionPage,
      error: InvalidRequestResponse
    }).pipe(requires("reviews:read")),
    HttpApiEndpoint.post("create", "/product-questions", {
      payload: CreateProductQuestion,
      success: ProductQuestionRecord.pipe(HttpApiSchema.status(201)),
      error: InvalidRequestResponse
    }).pipe(requires("reviews:write")),
    HttpApiEndpoint.get("get", "/product-questions/:id", {
      params: idParams,
      query: includeQuery,
      success: ProductQuestion,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:read")),
    HttpApiEndpoint.patch("update", "/product-questions/:id", {
      params: idParams,
      query: includeQuery,
      payload: UpdateProductQuestion,
      success: ProductQuestion,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("delete", "/product-questions/:id", {
      params: idParams,
      success: ProductQuestionRecord,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:write")),
    HttpApiEndpoint.get("listAnswers", "/product-questions/:id/answers", {
      params: idParams,
      success: ProductQuestionAnswerList,
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:read")),
    HttpApiEndpoint.post("createAnswer", "/product-questions/:id/answers", {
      params: idParams,
      payload: CreateProductQuestionAnswer,
      success: ProductQuestionAnswer.pipe(HttpApiSchema.status(201)),
      error: [InvalidRequestResponse, NotFoundResponse]
    }).pipe(requires("reviews:write")),
    HttpApiEndpoint.patch("updateAnswer", "/product-questions/:id/answers/:answerId", {
      params: answerParams,
      payload: UpdateProductQuestionAnswer,
      success: ProductQuestionAnswer,
      error: [InvalidRequestResponse, NotFoundResponse]
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Edit an answer",
        description: "Changes `body`, `published`, `authorName` or `metadata`; only sent fields change. Publishing or " +
          "hiding keeps the question's counts and `answeredAt` current; publishing the question's first published " +
          "answer emails the asker, once per question. Fires `productQuestionAnswer.updated`, unless nothing changed."
      }))
      .pipe(requires("reviews:write")),
    HttpApiEndpoint.delete("deleteAnswer", "/product-questions/:id/answers/:answerId", {
      params: answerParams,
      success: ProductQuestionAnswer,
      error: NotFoundResponse
    })
      .annotateMerge(OpenApi.annotations({
        summary: "Delete an answer",
        description: "Deletes the answer and returns it as it was; the question's counts and `answeredAt` follow. " +
          "Fires `productQuestionAnswer.deleted`."
      }))
      .pipe(requires("reviews:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Product questions",
    description:
      "Shopper questions about products: list, record, moderate and delete them, and answer as the store. The first published answer emails the asker once when they left an address."
  }))
{}
