/**
 * Webhook wiring of the server: the settings the use-cases and the dispatcher read, DNS, and the background
 * dispatcher that delivers (started with the routes, stopped gracefully with them: in-flight POSTs finish first).
 */
import { Webhooks } from "@feedback/core"
import { Layer } from "effect"
import { NodeHostResolver, NodeWebhookTransport } from "./NodeWebhookTransport.ts"

export interface WebhookServerOptions {
  /** Accept `http` webhook URLs (`WEBHOOK_ALLOW_INSECURE=true`). Default false. */
  readonly allowInsecure?: boolean | undefined
  /** Accept hosts that resolve to non-public addresses (`WEBHOOK_ALLOW_PRIVATE=true`). Default false. */
  readonly allowPrivate?: boolean | undefined
  /** Delivery timeout (`WEBHOOK_TIMEOUT_MS`). Default 10000. */
  readonly timeoutMs?: number | undefined
  /** Deliver from this server (default true); an object tunes the dispatcher. */
  readonly dispatcher?: boolean | Partial<Webhooks.DispatcherOptions> | undefined
  /** Replaces the operating system's DNS (tests; hosts with a resolver of their own). */
  readonly resolver?: Layer.Layer<Webhooks.HostResolver> | undefined
  /** Replaces the node:http client (tests). */
  readonly transport?: Layer.Layer<Webhooks.WebhookTransport> | undefined
}

const webhookSettingsOf = (options: WebhookServerOptions = {}): Webhooks.WebhookSettings => ({
  allowInsecure: options.allowInsecure ?? Webhooks.defaultWebhookSettings.allowInsecure,
  allowPrivate: options.allowPrivate ?? Webhooks.defaultWebhookSettings.allowPrivate,
  timeoutMs: options.timeoutMs ?? Webhooks.defaultWebhookSettings.timeoutMs
})

/** What the webhook handlers and the dispatcher need besides the store. */
export const WebhookRuntime = (options: WebhookServerOptions = {}) =>
  Layer.merge(
    Layer.succeed(Webhooks.CurrentWebhookSettings, webhookSettingsOf(options)),
    options.resolver ?? NodeHostResolver
  )

/** The background dispatcher, or nothing when `dispatcher: false`. */
export const WebhookDispatcherLive = (options: WebhookServerOptions = {}) =>
  options.dispatcher === false
    ? Layer.empty
    : Layer.effectDiscard(
      Webhooks.startDispatcher(
        options.dispatcher === true || options.dispatcher === undefined ? {} : options.dispatcher
      )
    ).pipe(
      Layer.provide(options.transport ?? NodeWebhookTransport)
    )
