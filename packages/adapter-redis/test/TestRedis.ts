/**
 * Where the Redis tests find a server: `TEST_REDIS_URL` (which `.ci/run` sets), else a throwaway `redis-server`
 * this process starts on a free loopback port and stops afterwards. With neither, the tests skip and say why —
 * except under CI, where a missing Redis is a failure rather than a silent skip.
 */
import { describe } from "vitest"
import { Effect, type Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { createServer } from "node:net"

const envUrl = process.env["TEST_REDIS_URL"] || undefined
const hasBinary = envUrl === undefined && spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0

export const redisAvailable = envUrl !== undefined || hasBinary
export const redisSource = envUrl !== undefined ? "TEST_REDIS_URL" : "a throwaway redis-server"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** A Redis server for a test file: the configured one (never stopped), or one started for it. */
export const startRedis = async (): Promise<{ readonly url: string; readonly stop: () => void }> => {
  if (envUrl !== undefined) return { url: envUrl, stop: () => {} }
  const port = await freePort()
  const child = spawn("redis-server", [
    "--bind",
    "127.0.0.1",
    "--port",
    String(port),
    "--save",
    "",
    "--appendonly",
    "no"
  ], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) resolve()
    })
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)))
  })
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill("SIGKILL") }
}

/** A Redis URL for the scope (see `startRedis`). */
export const redisUrl: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(startRedis),
  (redis) => Effect.sync(redis.stop)
).pipe(Effect.map((redis) => redis.url))

/** `describe` when a Redis is at hand; otherwise a skipped block that names the reason (a failure under CI). */
export const describeWithRedis = (name: string, body: () => void) => {
  if (redisAvailable) return describe(`${name} (Redis from ${redisSource})`, body)
  if (process.env["CI"] === "true") {
    return describe(name, () => {
      throw new Error("CI must run the Redis tests: set TEST_REDIS_URL or install redis-server (.ci/run does both)")
    })
  }
  return describe.skip(`${name} — skipped: no TEST_REDIS_URL and no redis-server on PATH`, body)
}
