// The fetch client, installed alone, calling a running server.
import { createAdminApiClient } from "@feedback/client"

const client = createAdminApiClient({ baseUrl: process.env.ADMIN_API_URL, secretKey: process.env.ADMIN_API_KEY })
const { data, error, response } = await client.GET("/organization")
if (error !== undefined) throw new Error(`${response.status}: ${JSON.stringify(error)}`)
const products = await client.POST("/products", { body: { title: "Client-only mug", slug: "client-only-mug" } })
if (products.response.status !== 201) throw new Error(`POST /products → ${products.response.status}`)
console.log(`client-only: GET /organization → ${data.name}; POST /products → 201`)
