/**
 * The `Webhooks` namespace of `@feedback/core`: what the webhooks capability offers hosts and adapters.
 */
export * as UrlGuard from "./UrlGuard.ts"
export * from "./EventCatalog.ts"
export * from "./EventFeed.ts"
export * from "./EventRetention.ts"
export * from "./EventStream.ts"
export * from "./FairShare.ts"
export * from "./HostEvents.ts"
export * from "./UrlGuard.ts"
export * from "./Webhook.ts"
export * from "./WebhookDestination.ts"
export * from "./WebhookDispatcher.ts"
export * from "./WebhookMetrics.ts"
export * from "./WebhookRepository.ts"
export * from "./WebhookRequests.ts"
export * from "./WebhookSignature.ts"
export * from "./Webhooks.ts"
