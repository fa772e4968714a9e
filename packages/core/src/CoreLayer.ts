/**
 * The core's use-case services, built once over a store: what a host provides a store layer, an id generator and a
 * DNS resolver (`HostResolver`, for webhook destinations) to, and then calls. Capabilities add their service here.
 * Host configuration with safe defaults (`CurrentWebhookSettings`, `SetupConfig`) is read when the layer is built,
 * so a host that wants other values provides them to this layer.
 */
import { Layer } from "effect"
import { Catalogs } from "./catalog/Catalogs.ts"
import { Unsubscribes } from "./catalog/Unsubscribes.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import { Jobs } from "./jobs/Jobs.ts"
import { Orders } from "./orders/Orders.ts"
import { Organizations } from "./organizations/Organizations.ts"
import { RateLimits } from "./ratelimit/RateLimits.ts"
import { ProductQuestions } from "./questions/ProductQuestions.ts"
import { Reviews } from "./reviews/Reviews.ts"
import { ReviewWrites } from "./reviews/ReviewWrites.ts"
import { ReviewAutomation } from "./setup/ReviewAutomation.ts"
import { Setup } from "./setup/Setup.ts"
import { StorefrontReads } from "./storefront/StorefrontReads.ts"
import { StorefrontReviews } from "./storefront/StorefrontReviews.ts"
import { StorefrontSubmissions } from "./storefront/StorefrontSubmissions.ts"
import { Surveys } from "./surveys/Surveys.ts"
import { HostEvents } from "./webhooks/HostEvents.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"

export const CoreLayer = Layer.mergeAll(
  Organizations.layer,
  RateLimits.layer,
  Catalogs.layer,
  Orders.layer,
  Surveys.layer,
  Unsubscribes.layer,
  Reviews.layer,
  ReviewWrites.layer,
  ProductQuestions.layer,
  Setup.layer,
  ReviewAutomation.layer,
  Webhooks.layer,
  HostEvents.layer,
  Idempotency.layer,
  StorefrontReads.layer,
  StorefrontSubmissions.layer,
  StorefrontReviews.layer,
  // Jobs run their batches with the other services' own use-cases (memoized: the same instances as above).
  Jobs.layer.pipe(Layer.provide([ReviewWrites.layer, Reviews.layer, Catalogs.layer]))
)
