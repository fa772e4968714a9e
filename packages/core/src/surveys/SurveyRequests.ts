/** What the survey endpoints accept (docs/DECISIONS.md §48), and the list endpoint's fields. */
import { Schema } from "effect"
import { type FieldType, makeFieldCatalog } from "../kernel/Filter.ts"
import { OrderId, SurveyFlowId } from "../kernel/Ids.ts"
import { defineListEndpoint } from "../kernel/ListQuery.ts"
import type { Survey } from "./Survey.ts"

/** `POST /surveys`: a manual review request for the order, through the flow (default: the newest active one). */
export const SurveyCreate = Schema.Struct({
  orderId: OrderId,
  flowId: Schema.optionalKey(SurveyFlowId)
}).annotate({ identifier: "SurveyCreate" })
export type SurveyCreate = typeof SurveyCreate.Type

export const surveyFilterFields: Readonly<Record<string, FieldType>> = {
  id: "uuid",
  status: "string",
  flowId: "uuid",
  createdAt: "timestamp",
  updatedAt: "timestamp",
  "order.id": "uuid",
  "customer.id": "uuid",
  "customer.email": "string"
}

/** `GET /surveys` (docs/DECISIONS.md §4, §48); `search` looks in the customer's email. */
export const surveyListEndpoint = defineListEndpoint({
  name: "surveys",
  sorts: ["createdAt", "-createdAt", "updatedAt", "-updatedAt"],
  defaultSort: "-createdAt",
  includes: [],
  catalog: makeFieldCatalog(surveyFilterFields)
})

/** Reads a field of `surveyFilterFields` from a survey and its customer's email. */
export const surveyField = (survey: Survey, customerEmail: string | null) => (path: string): unknown =>
  path === "order.id"
    ? survey.orderId
    : path === "customer.id"
    ? survey.customerId
    : path === "customer.email"
    ? customerEmail
    : (survey as unknown as Record<string, unknown>)[path]
