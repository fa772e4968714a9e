/**
 * The floor for the hot-path benchmark: bare `node:http` doing the same essential work as `GET /organization` —
 * hash the bearer key, find it in a Map, answer the organization as a small JSON — and nothing else (no routing
 * framework, no rate limit, no schema encoding). Prints the same "Admin API listening on <url>" line as main.ts.
 * The one key it knows is `BENCH_KEY`.
 */
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { organizationByKeyHash as byHash } from "./bench-organization.ts"

const server = createServer((req, res) => {
  const auth = req.headers.authorization ?? ""
  const found = req.method === "GET" && req.url === "/organization" && auth.startsWith("Bearer ")
    ? byHash.get(createHash("sha256").update(auth.slice(7)).digest("hex"))
    : undefined
  const body = found === undefined
    ? JSON.stringify({ error: { code: "UNAUTHORIZED", message: "Missing or invalid API key." } })
    : JSON.stringify(found)
  res.writeHead(found === undefined ? 401 : 200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body)
  })
  res.end(body)
})
server.listen(Number(process.env["PORT"] ?? 0), "127.0.0.1", () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  process.stdout.write(`Admin API listening on http://127.0.0.1:${port} (bare node:http)\n`)
})
const stop = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
