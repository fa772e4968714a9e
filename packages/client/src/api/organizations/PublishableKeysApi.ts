/**
 * Publishable keys in the admin API (docs/DECISIONS.md §55): the keys storefront widgets authenticate with. A key is
 * public; its signing secret (for signed customer calls) is shown once, when the key is created.
 */
import { Kernel, Organizations } from "@feedback/core"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { NotFoundResponse } from "../ErrorResponses.ts"
import { requires, SecretKeyAuth } from "../Security.ts"
import { doc } from "../Describe.ts"

export const PublishableKeyList = Schema.Struct({ data: Schema.Array(Organizations.PublishableKey) }).annotate({
  identifier: "PublishableKeyList"
})

export class PublishableKeysApi extends HttpApiGroup.make("publishableKeys")
  .add(
    HttpApiEndpoint.get("list", "/publishable-keys", { success: PublishableKeyList })
      .annotateMerge(doc(
        "List publishable keys",
        "Every publishable key of the organization, newest first, revoked ones included (`revokedAt`). The setup state's `publishableKey` is the newest one not revoked."
      ))
      .pipe(requires("settings:read")),
    HttpApiEndpoint.post("create", "/publishable-keys", {
      success: Organizations.IssuedPublishableKey.pipe(HttpApiSchema.status(201))
    })
      .annotateMerge(doc(
        "Create a publishable key",
        "Issues a `pk_…` key for storefront widgets (`/storefront/…` routes) and its `signingSecret`, which signs customer calls on your backend. The signing secret is shown only in this answer; keep it on your server."
      ))
      .pipe(requires("settings:write")),
    HttpApiEndpoint.delete("revoke", "/publishable-keys/:id", {
      params: { id: Kernel.PublishableKeyId },
      success: Organizations.PublishableKey,
      error: NotFoundResponse
    })
      .annotateMerge(doc(
        "Revoke a publishable key",
        "The key stops working at once on every storefront route; revoking it again changes nothing. Answers the key with its `revokedAt`."
      ))
      .pipe(requires("settings:write"))
  )
  .middleware(SecretKeyAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Publishable keys",
    description:
      "Keys for storefront widgets: public, read-only on published content, rate limited per key and client address."
  }))
{}
