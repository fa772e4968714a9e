/**
 * The deliveries this service POSTs, as the OpenAPI 3.1 `webhooks` section (docs/DECISIONS.md §17): one entry per
 * event name the service emits (and `webhook.ping`), with the envelope and the JSON Schema of its `data`, so clients
 * generated from the document get receiver types too. Events an embedding host records are its own to describe.
 */
import { Catalog, Questions, Reviews, Setup, Webhooks } from "@feedback/core"
import { Schema } from "effect"

/** The record each resource's events carry as `data`, in the shape the API returns it. */
const dataOf: Readonly<Record<string, Schema.Top>> = {
  customer: Catalog.Customer,
  product: Catalog.Product,
  site: Catalog.Site,
  review: Reviews.ReviewRecord,
  productQuestion: Questions.ProductQuestionRecord,
  productQuestionAnswer: Questions.ProductQuestionAnswer,
  surveyFlow: Setup.SurveyFlow,
  emailTemplate: Setup.EmailTemplate,
  webhook: Webhooks.Webhook
}

/**
 * The JSON Schema of a record for the document: its named parts become `components.schemas` (kept when the API's
 * own operations already put them there), so `$ref`s resolve in the OpenAPI document.
 */
const jsonSchemaOf = (schema: Schema.Top, components: Record<string, unknown>): object => {
  const document = Schema.toJsonSchemaDocument(schema as never)
  const toComponents = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value),
      (key, v) => key === "$ref" && typeof v === "string" ? v.replace("#/$defs/", "#/components/schemas/") : v
    )
  for (const [name, definition] of Object.entries(document.definitions)) components[name] ??= toComponents(definition)
  return toComponents(document.schema)
}

const uuid = { type: "string", format: "uuid" }

const envelope = (event: string, data: object) => ({
  type: "object",
  required: ["event", "timestamp", "idempotencyKey", "eventId", "data"],
  additionalProperties: false,
  properties: {
    event: { type: "string", const: event },
    timestamp: { type: "string", format: "date-time", description: "When the event happened." },
    idempotencyKey: {
      ...uuid,
      description: "Unique per delivery (also the `webhook-id` header): dedupe on it or on `eventId`."
    },
    eventId: { ...uuid, description: "The event's id in `GET /events`; a redelivery carries its original's." },
    data
  }
})

const signatureHeaders = [
  { name: "webhook-id", in: "header", required: true, schema: uuid, description: "The delivery's idempotency key." },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "Unix seconds of this attempt."
  },
  {
    name: "webhook-signature",
    in: "header",
    required: false,
    schema: { type: "string" },
    description:
      "Standard Webhooks: `v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\">`, space-separated during a secret rotation. Sent when the webhook has a secret."
  },
  {
    name: "X-Webhook-Signature",
    in: "header",
    required: false,
    schema: { type: "string" },
    description: "`sha256=<hex HMAC-SHA256 of the raw body>`. Sent when the webhook has a secret."
  }
]

const operation = (event: string, data: object) => ({
  post: {
    operationId: `webhook.${event}`,
    summary: event,
    description: event === Webhooks.PING_EVENT
      ? "A test delivery sent by `POST /webhooks/{id}/ping`; `data` is the webhook (never its secret)."
      : `Sent to webhooks subscribed to \`${event}\`. Deliveries about one record arrive in order; none is retried automatically (catch up with \`GET /events\`).`,
    parameters: signatureHeaders,
    requestBody: { required: true, content: { "application/json": { schema: envelope(event, data) } } },
    responses: {
      "2XX": {
        description: "Any 2xx marks the delivery delivered; anything else, or no answer within the timeout, failed."
      }
    }
  }
})

/** Adds the `webhooks` section to a generated OpenAPI document. */
export const withWebhookDeliveries = (spec: Record<string, any>): Record<string, any> => {
  const webhooks: Record<string, unknown> = {}
  const components: Record<string, unknown> = (spec["components"] ??= {})["schemas"] ??= {}
  for (const event of [...Webhooks.SERVICE_EVENT_NAMES, Webhooks.PING_EVENT]) {
    const resource = event === Webhooks.PING_EVENT ? "webhook" : event.slice(0, event.indexOf("."))
    const schema = dataOf[resource]
    webhooks[event] = operation(event, schema === undefined ? {} : jsonSchemaOf(schema, components))
  }
  return { ...spec, webhooks }
}
