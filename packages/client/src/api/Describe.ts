/**
 * The one way the contract writes OpenAPI text: `doc` for an operation (its summary, a short imperative title, and its
 * description, when and why to call it), `docGroup` for a group (its tag's title and description).
 */
import { OpenApi } from "effect/http-api"

export const doc = (summary: string, description: string) => OpenApi.annotations({ summary, description })

export const docGroup = (title: string, description: string) => OpenApi.annotations({ title, description })
