/** The OpenAPI summary (a short imperative title) and description (when and why to call it) of an operation. */
import { OpenApi } from "effect/http-api"

export const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })
