/** Instance secrets over PostgreSQL: one row per name, shared by every process on the database. */
import { Kernel } from "@feedback/core"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "./SqlErrors.ts"

export const PgInstanceSecretRepository = Layer.effect(
  Kernel.InstanceSecretRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Kernel.InstanceSecretRepository.of({
      // Insert-if-absent, then read: of processes racing on first use, the one whose insert commits first wins, the
      // others' inserts wait for it and do nothing, and every process reads the same committed value.
      getOrCreate: Effect.fn("InstanceSecretRepository.getOrCreate")(function*(name: string, candidate: string) {
        yield* sql`INSERT INTO instance_secrets (name, value) VALUES (${name}, ${candidate}) ON CONFLICT (name) DO NOTHING`
        const rows = yield* sql<{ readonly value: string }>`SELECT value FROM instance_secrets WHERE name = ${name}`
        const [row] = rows
        if (row === undefined) return yield* Effect.die(new Error(`instance secret ${name} vanished after insert`))
        return row.value
      }, orDie)
    })
  })
)
