/**
 * A host reacting to the Admin API's events in its own process, without webhooks or HTTP: `committedEvents` is an
 * Effect `Stream` of every organization's committed events, in the feed's order, each once. The host keeps the
 * `position` of the last event it handled (here in memory; in a real host in its own table, written in the same
 * transaction as what it did with the event) and resumes after it when it starts again: nothing lost, nothing twice.
 *
 * This host feeds a moderation inbox with every new review of 1 or 2 stars.
 *
 *   node examples/event-consumer/consumer.ts      then import reviews through http://127.0.0.1:4000/api
 */
import { makeNodeHandler, nodeMount } from "@feedback/adapter-http/server"
import { type Kernel, Webhooks } from "@feedback/core"
import { Effect, Fiber, Stream } from "effect"
import { createServer } from "node:http"
import { openHostStore, runningHost } from "../shared/HostStore.ts"

/** What the host keeps of a review that needs a look. */
export interface InboxItem {
  readonly organizationId: string
  readonly reviewId: string
  readonly rating: number
}

export const startEventConsumerHost = async (port = Number(process.env["PORT"] ?? 4000)) => {
  const store = openHostStore()
  const api = await makeNodeHandler(store.services, {}, store.runtime.memoMap)
  const tenant = await store.provisionTenant("Event consumer shop")

  const inbox: Array<InboxItem> = []
  /** The host's saved place in the stream. */
  let position: Kernel.FeedPosition | undefined

  // Each start reads the position saved by the run before it.
  const consume = () =>
    Stream.runForEach(
      Webhooks.committedEvents({ after: position, events: ["review.created"] }),
      ({ event, position: next }) =>
        Effect.sync(() => {
          const review = event.data as { readonly id: string; readonly rating: number }
          if (review.rating <= 2) {
            inbox.push({ organizationId: event.organizationId, reviewId: review.id, rating: review.rating })
          }
          position = next
        })
    )
  let consumer = store.runtime.runFork(Effect.suspend(consume))

  const mount = nodeMount(api, "/api")
  const server = createServer((req, res) => {
    if (!mount(req, res)) res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const host = runningHost(server, tenant.secretKey, api, store.runtime)
  return {
    ...host,
    inbox,
    /** Stops consuming (as a host process going down would) and starts again from the saved position. */
    restartConsumer: async () => {
      await Effect.runPromise(Fiber.interrupt(consumer))
      consumer = store.runtime.runFork(Effect.suspend(consume))
    },
    stopConsumer: () => Effect.runPromise(Fiber.interrupt(consumer)),
    close: async () => {
      await Effect.runPromise(Fiber.interrupt(consumer))
      await host.close()
    }
  }
}

if (import.meta.main) {
  const host = await startEventConsumerHost()
  console.log(`Admin API under ${host.url}/api — key ${host.key}; low ratings land in the host's inbox`)
}
