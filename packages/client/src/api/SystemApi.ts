/** Unauthenticated service endpoints. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { doc, docGroup } from "./Describe.ts"
import { StoreUnavailableResponse } from "./ErrorResponses.ts"

export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })

export class SystemApi extends HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", { success: Health })
    .annotateMerge(doc(
      "Check liveness",
      "200 while the process serves requests; it does not touch the store (use `/ready` for that)."
    )),
  HttpApiEndpoint.get("ready", "/ready", { success: Health, error: StoreUnavailableResponse })
    .annotateMerge(doc(
      "Check readiness",
      "200 when the store answers a trivial query within 2 seconds, 503 `SERVICE_UNAVAILABLE` otherwise: " +
        "for load balancers and orchestrators deciding whether to send traffic here. No key needed."
    ))
)
  .annotateMerge(docGroup(
    "System",
    "Health checks for load balancers and orchestrators; no key needed, never rate limited."
  ))
{}
