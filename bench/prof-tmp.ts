import { startServerProcess } from "../packages/adapter-http/test/ServerProcess.ts"
import { load, OPERATOR_TOKEN, provision } from "./support/common.ts"
const server = await startServerProcess({ DATABASE_URL: "memory", OPERATOR_TOKEN, LOG_REQUESTS: "false", NODE_OPTIONS: `--conditions=@feedback/source --cpu-prof --cpu-prof-dir=${process.env.DIR}` }, {})
const { key } = await provision(server.url)
const r = await load(`${server.url}/organization`, key, { seconds: 8, warmupSeconds: 1, connections: 32, serverPid: server.pid })
console.log(r.requestsPerSecond, r.serverCpuMicrosPerRequest, r.non2xx)
await server.stop()
