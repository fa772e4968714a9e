/**
 * Labelled fields with their own error texts (from the messages object, not the browser's bubbles): each error is
 * tied to its field with `aria-describedby` and `aria-invalid`, and a refused form focuses its first wrong field.
 */
import { h, uid } from "./Dom.ts"
import type { Messages } from "./Messages.ts"
import { ApiError } from "./StorefrontClient.ts"

export interface Field {
  readonly element: HTMLElement
  readonly control: HTMLInputElement | HTMLTextAreaElement
  readonly value: () => string
  readonly setError: (message: string | null) => void
}

export const field = (
  label: string,
  options: {
    readonly type?: "text" | "email"
    readonly multiline?: boolean
    readonly required?: boolean
    readonly maxLength?: number
    readonly autocomplete?: string
    readonly value?: string
  } = {}
): Field => {
  const id = uid("field")
  const errorId = `${id}-error`
  const attributes = {
    id,
    name: id,
    required: options.required === true,
    maxlength: options.maxLength,
    autocomplete: options.autocomplete
  }
  const control = options.multiline === true
    ? h("textarea", attributes)
    : h("input", { ...attributes, type: options.type ?? "text", value: options.value })
  const error = h("p", { class: "error", id: errorId, hidden: true })
  return {
    element: h("div", { class: "field" }, h("label", { for: id }, label), control, error),
    control,
    value: () => control.value.trim(),
    setError: (message) => {
      error.textContent = message ?? ""
      error.hidden = message === null
      if (message === null) {
        control.removeAttribute("aria-invalid")
        control.removeAttribute("aria-describedby")
      } else {
        control.setAttribute("aria-invalid", "true")
        control.setAttribute("aria-describedby", errorId)
      }
    }
  }
}

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** Checks required and email fields; shows each problem and focuses the first. Whether all were right. */
export const validate = (messages: Messages, fields: ReadonlyArray<Field>): boolean => {
  let first: Field | undefined
  for (const f of fields) {
    const value = f.value()
    const problem = f.control.required && value === ""
      ? messages.fieldRequired
      : f.control.type === "email" && value !== "" && !emailShape.test(value)
      ? messages.emailInvalid
      : null
    f.setError(problem)
    if (problem !== null) first ??= f
  }
  first?.control.focus()
  return first === undefined
}

/** What to tell the shopper when a submission was refused. */
export const submissionProblem = (messages: Messages, error: unknown): string => {
  if (error instanceof ApiError) {
    if (error.status === 429) return messages.tooMany
    const message = (error.body as { error?: { message?: unknown } } | null)?.error?.message
    if (error.status === 400 && typeof message === "string") return message
  }
  return messages.submitError
}

/** A live region for the outcome of a form: screen readers announce what is written into it. */
export const statusRegion = (): HTMLElement => h("p", { class: "status", role: "status", "aria-live": "polite" })
