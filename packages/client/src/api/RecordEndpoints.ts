/**
 * The endpoints of a record kept under one path (`/products`, `/products/{id}`): list, get, create, update and
 * delete, and the bulk import of many, each shape said once here (path, id parameter, answer, the errors every one has, permission), so the groups
 * of sites, products, customers, orders and surveys cannot drift apart. A group adds the ones it has, in its own
 * order, with its own OpenAPI text (`doc`) and the errors its rules add (a 409 where a key must be unique).
 */
import { Catalog, type Kernel } from "@feedback/core"
import type { Schema } from "effect"
import { HttpApiEndpoint, HttpApiSchema, type OpenApi } from "effect/http-api"
import { ImportFailedResponse, InvalidRequestResponse, NotFoundResponse } from "./ErrorResponses.ts"
import { listQuery, pageOf } from "./ListParams.ts"
import { requires } from "./Security.ts"

/** What `doc(summary, description)` makes: an operation's OpenAPI text. */
type Documentation = ReturnType<typeof OpenApi.annotations>

/**
 * A group's error responses as `HttpApiEndpoint` takes them. Its check that no error is a stream cannot be decided
 * for a type parameter; the endpoints below are given their types explicitly, and these are `ErrorResponses.ts`'s.
 */
const errorResponses = <Error extends ReadonlyArray<Schema.Top>>(error: Error): never => error as never

export const recordEndpoints = <
  const Path extends `/${string}`,
  Id extends Schema.Top,
  Record extends Schema.Top
>(record: {
  /** The collection's path; a record's own is `<path>/:id`. */
  readonly path: Path
  readonly id: Id
  readonly schema: Record
  readonly read: Kernel.Permission
  readonly write: Kernel.Permission
}) => {
  const params = { id: record.id }
  const recordPath = `${record.path}/:id` as `${Path}/:id`
  const created = record.schema.pipe(HttpApiSchema.status(201))
  /** A `POST` of `payload` to `path` (a create or an import), under the record's write permission. */
  const post = <
    const Name extends string,
    const P extends string,
    Payload extends Schema.Top,
    Success extends Schema.Top,
    const Error extends ReadonlyArray<Schema.Top>
  >(name: Name, path: P, payload: Payload, success: Success, error: Error, documentation: Documentation) =>
    HttpApiEndpoint.post<Name, P & `/${string}`, never, never, Payload, never, Success, Error>(
      name,
      path as P & `/${string}`,
      {
        payload,
        success,
        error: errorResponses(error)
      }
    ).annotateMerge(documentation).pipe(requires(record.write))
  return {
    /** `GET <path>`: a page of records; limit, cursor, sort, search and filter. */
    list: <const Sort extends string>(
      endpoint: { readonly sorts: ReadonlyArray<Sort>; readonly defaultSort: NoInfer<Sort> },
      documentation: Documentation
    ) =>
      HttpApiEndpoint.get("list", record.path, {
        query: listQuery(endpoint),
        success: pageOf(record.schema),
        error: InvalidRequestResponse
      }).annotateMerge(documentation).pipe(requires(record.read)),
    /** `GET <path>/:id`: one record; 404 when it is not the organization's. */
    get: (documentation: Documentation) =>
      HttpApiEndpoint.get("get", recordPath, {
        params,
        success: record.schema,
        error: [NotFoundResponse, InvalidRequestResponse]
      }).annotateMerge(documentation).pipe(requires(record.read)),
    /** `POST <path>`: answers the new record with 201. */
    create: <Payload extends Schema.Top, const Error extends ReadonlyArray<Schema.Top>>(
      payload: Payload,
      error: Error,
      documentation: Documentation
    ) => post("create", record.path, payload, created, error, documentation),
    /** `POST <path>/import`: many records in one transaction; answers what was imported and skipped. */
    import: <Payload extends Schema.Top>(payload: Payload, documentation: Documentation) =>
      post(
        "import",
        `${record.path}/import` as `${Path}/import`,
        payload,
        Catalog.ImportResult,
        [ImportFailedResponse, InvalidRequestResponse],
        documentation
      ),
    /** `PATCH <path>/:id`: answers the record as it is now. */
    update: <Payload extends Schema.Top, const Error extends ReadonlyArray<Schema.Top>>(
      payload: Payload,
      error: Error,
      documentation: Documentation
    ) =>
      HttpApiEndpoint.patch<"update", `${Path}/:id`, typeof params, never, Payload, never, Record, Error>(
        "update",
        recordPath,
        { params, payload, success: record.schema, error: errorResponses(error) }
      ).annotateMerge(documentation).pipe(requires(record.write)),
    /** `DELETE <path>/:id`: answers the record as it was. */
    delete: <const Error extends ReadonlyArray<Schema.Top>>(error: Error, documentation: Documentation) =>
      HttpApiEndpoint.delete<"delete", `${Path}/:id`, typeof params, never, never, never, Record, Error>(
        "delete",
        recordPath,
        { params, success: record.schema, error: errorResponses(error) }
      ).annotateMerge(documentation).pipe(requires(record.write))
  }
}
