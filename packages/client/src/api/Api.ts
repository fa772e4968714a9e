/**
 * The admin API contract: every group, endpoint and schema, with no server code, so a client imports it alone.
 * Bodies and query strings are strict: an unknown field is a 400 that names it (a typo must not silently do nothing).
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { CustomersApi, ProductsApi, SitesApi } from "./catalog/CatalogApi.ts"
import { withIdempotencyKeys } from "./IdempotencyOpenApi.ts"
import { withDocumentation } from "./OpenApiDocument.ts"
import { withRateLimitCosts } from "./OpenApiExtensions.ts"
import { withWebhookDeliveries } from "./webhooks/WebhookDeliveriesOpenApi.ts"
import { ExportJobsApi, ImportJobsApi } from "./jobs/JobsApi.ts"
import { OrdersApi } from "./orders/OrdersApi.ts"
import { SurveysApi } from "./surveys/SurveysApi.ts"
import { OrganizationApi } from "./organizations/OrganizationApi.ts"
import { PublishableKeysApi } from "./organizations/PublishableKeysApi.ts"
import { ProductQuestionsApi } from "./questions/ProductQuestionsApi.ts"
import { ReviewWritesApi } from "./reviews/ReviewWritesApi.ts"
import { ReviewsApi } from "./reviews/ReviewsApi.ts"
import { RequestValidation } from "./Security.ts"
import { AutomationApi } from "./setup/AutomationApi.ts"
import { SetupApi } from "./setup/SetupApi.ts"
import { StorefrontApi } from "./storefront/StorefrontApi.ts"
import { SystemApi } from "./SystemApi.ts"
import { WebhooksApi } from "./webhooks/WebhooksApi.ts"

export class AdminApi extends HttpApi.make("admin-api")
  .add(SystemApi)
  .add(OrganizationApi)
  .add(PublishableKeysApi)
  .add(ProductQuestionsApi)
  .add(SetupApi)
  .add(AutomationApi)
  .add(WebhooksApi)
  .add(ReviewWritesApi)
  .add(SitesApi, ProductsApi, CustomersApi)
  .add(OrdersApi)
  .add(SurveysApi)
  .add(ReviewsApi)
  .add(ImportJobsApi, ExportJobsApi)
  .add(StorefrontApi)
  // After every group: applies to each endpoint added above.
  .middleware(RequestValidation)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Feedback platform Admin API",
    version: "0.1.0",
    description:
      "Merchant Admin API: setup status, reviews and replies, product questions, webhooks and rate limits.\n\n" +
      "Authenticate with a secret key: `Authorization: Bearer sk_…`. Every response carries `X-Request-Id`; every " +
      "authenticated one the organization's rate-limit state. Errors are `{\"error\": {\"code\", \"message\", \"details\"?}}`.\n\n" +
      "Storefront routes (`/storefront/…`, tag Storefront) take a publishable key instead (`X-Publishable-Key: pk_…` or " +
      "`?apiPublishableKey=pk_…`): public reads of published content, rate limited per key and client address.",
    license: { name: "MIT", identifier: "MIT" },
    servers: [{
      url: "{origin}",
      description: "Your deployment of the API; `npm start` serves it on port 3000 (`PORT`).",
      variables: { origin: { default: "http://localhost:3000", description: "Scheme, host and port of the server." } }
    }],
    transform: (spec) => withDocumentation(withIdempotencyKeys(withWebhookDeliveries(withRateLimitCosts(spec))))
  }))
{}
