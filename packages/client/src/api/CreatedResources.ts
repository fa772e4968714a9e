/**
 * Where each create's record lives afterwards, as data shared by the server and the OpenAPI document (docs/DECISIONS.md
 * §63): the server answers the create with `Location`, and the document states that header and, where the record can
 * be read, an OpenAPI link to the read, so stateful clients (generated clients, Schemathesis) can follow it.
 *
 * `location` is the request's path, then `/{id}` (the created record's `id`) unless the path itself names the record.
 */
export interface CreatedResource {
  /** `METHOD /path` as the document spells it. */
  readonly create: string
  /** Whether the record's own path is the request path followed by its `id`, or the request path itself. */
  readonly location: "path/id" | "path"
  /** The read to follow, and where its path parameter comes from (an OpenAPI runtime expression). */
  readonly read?: { readonly operationId: string; readonly id: string }
}

const byBodyId = "$response.body#/id"
const byPathId = "$request.path.id"

export const createdResources: ReadonlyArray<CreatedResource> = [
  { create: "POST /sites", location: "path/id", read: { operationId: "sites.get", id: byBodyId } },
  { create: "POST /products", location: "path/id", read: { operationId: "products.get", id: byBodyId } },
  { create: "POST /customers", location: "path/id", read: { operationId: "customers.get", id: byBodyId } },
  { create: "POST /orders", location: "path/id", read: { operationId: "orders.get", id: byBodyId } },
  { create: "POST /surveys", location: "path/id", read: { operationId: "surveys.get", id: byBodyId } },
  { create: "POST /webhooks", location: "path/id", read: { operationId: "webhooks.get", id: byBodyId } },
  {
    create: "POST /product-questions",
    location: "path/id",
    read: { operationId: "productQuestions.get", id: byBodyId }
  },
  {
    create: "POST /product-questions/{id}/answers",
    location: "path/id",
    read: { operationId: "productQuestions.listAnswers", id: byPathId }
  },
  { create: "POST /reviews/{id}/response", location: "path", read: { operationId: "reviewsRead.get", id: byPathId } },
  { create: "POST /publishable-keys", location: "path/id" },
  { create: "POST /import-jobs", location: "path/id", read: { operationId: "importJobs.get", id: byBodyId } },
  { create: "POST /export-jobs", location: "path/id", read: { operationId: "exportJobs.get", id: byBodyId } }
]

/** The entry for `method` and a route pattern (`/reviews/:id/response` or `/reviews/{id}/response`). */
export const createdResourceOf = (method: string, pattern: string): CreatedResource | undefined =>
  byCreate.get(`${method} ${pattern.replace(/:(\w+)/g, "{$1}")}`)

const byCreate = new Map(createdResources.map((entry) => [entry.create, entry]))

/** The `Location` of a created record: `path` is the request's path (no query), `id` the record's. */
export const locationOf = (entry: CreatedResource, path: string, id: string): string =>
  entry.location === "path" ? path : `${path.replace(/\/+$/, "")}/${encodeURIComponent(id)}`
