/**
 * Regenerates `src/fetch/AdminApiPaths.ts`, the types of the plain fetch client, from the OpenAPI document the
 * server serves (`OpenApi.fromApi(AdminApi)` is exactly `/openapi.json`). Run after changing the contract:
 *
 *   npm run generate:client
 *
 * `test/FetchClientTypes.test.ts` fails while the checked-in file differs from what this would write.
 */
import { OpenApi } from "effect/http-api"
import { writeFileSync } from "node:fs"
import { AdminApi } from "../src/api/Api.ts"
import { fetchTypesSource } from "./FetchTypes.ts"

const target = new URL("../src/fetch/AdminApiPaths.ts", import.meta.url)
writeFileSync(target, await fetchTypesSource(OpenApi.fromApi(AdminApi)))
console.log(`wrote ${target.pathname}`)
