/**
 * `GET /events` over HTTP (docs/DECISIONS.md §17): the organization's events oldest first, a cursor that is never null,
 * names to narrow it, the envelope for bad input, and the link to deliveries through `eventId`.
 */
import { expect, it } from "vitest"
import { useTestServer } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const http = useTestServer(() => makeTestServer())
const { get } = http

it("lists what happened, oldest first, and picks up later from its cursor", async () => {
  await http.server.request("POST", "/products", { token: http.key, body: { title: "Feed mug", slug: "feed-mug" } })
  expect(
    (await http.server.request("POST", "/sites", {
      token: http.key,
      body: { name: "Feed shop", domain: "feed.example" }
    })).status
  ).toBe(201)
  const first = await get("/events?limit=1")
  expect(first.status).toBe(200)
  expect(first.body.data.map((e: { event: string }) => e.event)).toEqual(["product.updated"])
  expect(first.body.data[0]).toMatchObject({ data: { slug: "feed-mug" } })
  const rest = await get(`/events?cursor=${encodeURIComponent(first.body.nextCursor)}`)
  expect(rest.body.data.map((e: { event: string }) => e.event)).toEqual(["site.created"])
  expect(typeof rest.body.nextCursor).toBe("string")
  const nothingYet = await get(`/events?cursor=${encodeURIComponent(rest.body.nextCursor)}`)
  expect(nothingYet.body.data).toEqual([])
  await http.server.request("POST", "/products", { token: http.key, body: { title: "Second", slug: "second" } })
  const later = await get(`/events?cursor=${encodeURIComponent(nothingYet.body.nextCursor)}`)
  expect(later.body.data.map((e: { data: { slug: string } }) => e.data.slug)).toEqual(["second"])
  const onlySites = await get("/events?events=site.created")
  expect(onlySites.body.data.map((e: { event: string }) => e.event)).toEqual(["site.created"])
})

it("answers 400 for unknown names, a foreign cursor or a bad limit, and 403 without settings:read", async () => {
  expect((await get("/events?events=order.shipped")).status).toBe(400)
  expect((await get("/events?limit=0")).status).toBe(400)
  expect((await get("/events?cursor=not-a-cursor")).status).toBe(400)
  const other = await http.server.provision()
  const foreign = (await get("/events", other.key)).body.nextCursor
  expect((await get(`/events?cursor=${encodeURIComponent(foreign)}`)).status).toBe(400)
  const reader = await http.server.provision({ permissions: ["reviews:read"] })
  expect((await get("/events", reader.key)).status).toBe(403)
})
