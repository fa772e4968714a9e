/**
 * The Admin API as a Fastify 5 plugin: register it with a `prefix` and it serves every path below it, over the
 * store layer the host passes; Fastify's `onClose` stops the API's background workers and releases what it built.
 * The API reads bodies itself, so the plugin's routes take the raw request unparsed.
 */
import { type ApiServerOptions, type ApiServices, makeNodeHandler } from "@feedback/adapter-http/server"
import type { Layer } from "effect"
import type { FastifyPluginAsync } from "fastify"

export interface AdminApiPluginOptions {
  readonly services: Layer.Layer<ApiServices, unknown>
  readonly options?: ApiServerOptions
  /** The host runtime's memo map, to share the store it already built. */
  readonly memoMap?: Layer.MemoMap
}

export const adminApiPlugin: FastifyPluginAsync<AdminApiPluginOptions> = async (
  fastify,
  { services, options, memoMap }
) => {
  const api = await makeNodeHandler(services, options, memoMap)
  fastify.addHook("onClose", () => api.dispose())
  // Encapsulated to this plugin: leave the body stream untouched for the API.
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser("*", (_request, _payload, done) => done(null))
  const prefix = fastify.prefix
  const serve = (request: import("fastify").FastifyRequest, reply: import("fastify").FastifyReply) => {
    reply.hijack()
    request.raw.url = (request.raw.url ?? "/").slice(prefix.length) || "/"
    api.handler(request.raw, reply.raw)
  }
  fastify.all("/", serve)
  fastify.all("/*", serve)
}
