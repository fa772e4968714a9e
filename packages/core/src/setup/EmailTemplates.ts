/**
 * Email templates as Liquid (shared DECISIONS §17; docs/EMAILS.md, docs/DECISIONS.md §50): validated when
 * saved, rendered when a flow sends. Pure: no store, no clock, no file system.
 *
 * The sandbox: the tags that read other templates (`include`, `render`, `layout`, `block`) do not exist, so a template
 * using them does not parse; the engine looks templates up in an empty in-memory map, never on disk; `raw` escapes like
 * any output; block nesting, source size, allocations, output size and render work are bounded, so a hostile template
 * fails fast with a message saying which bound it hit (docs/DECISIONS.md §72: work is counted, not timed).
 */
import { Result, Schema } from "effect"
import { Context, type Emitter, Liquid, toValue, toValueSync } from "liquidjs"
import type { RequestIssue } from "../kernel/Errors.ts"
import { automationLimits } from "./AutomationRequests.ts"

export const emailTemplateLimits = {
  /** The longest subject and body source accepted (the text limits of docs/DECISIONS.md §11, `automationLimits`). */
  subjectLength: automationLimits.subjectLength,
  bodyLength: automationLimits.bodyLength,
  /** Blocks (`if`, `for`, `case`…) nested deeper than this do not parse: no template needs it, and recursion is bounded. */
  maxNesting: 20,
  /**
   * Template nodes one render may run (each output, tag and loop turn is one): the bound on render work, counted
   * rather than timed, so a render descheduled on a loaded machine never fails (docs/DECISIONS.md §72).
   */
  renderSteps: 100_000,
  /** liquidjs `memoryLimit`: strings, ranges and arrays a render may allocate. */
  memory: 2_000_000,
  /** Characters of a rendered body (HTML; Gmail clips messages past ~100 KB anyway) and subject. */
  bodyOutputLength: 500_000,
  subjectOutputLength: 1_000
} as const

/** Tags that read other templates: not registered, so a template naming one fails to parse. */
const fileTags = ["include", "render", "layout", "block"] as const

const makeEngine = (escape: boolean): Liquid => {
  const engine = new Liquid({
    // Lookups of other templates go to this empty map, never to the file system.
    templates: {},
    ...(escape ? { outputEscape: "escape" as const } : {}),
    parseLimit: emailTemplateLimits.bodyLength + emailTemplateLimits.subjectLength,
    memoryLimit: emailTemplateLimits.memory,
    ownPropertyOnly: true,
    strictVariables: false,
    strictFilters: true,
    timezoneOffset: 0,
    locale: "en-US",
    cache: false
  })
  for (const tag of fileTags) delete (engine.tags as Record<string, unknown>)[tag]
  // `raw` would let a customer's own name write markup into the HTML: it is a no-op here, so output stays escaped.
  engine.registerFilter("raw", (value: unknown) => value)
  return engine
}

/** The HTML body: every output escaped. */
const htmlEngine = makeEngine(true)
/** Subjects and plain-text bodies: nothing escaped. */
const textEngine = makeEngine(false)

const blockTags = new Set(["if", "unless", "for", "case", "capture", "tablerow", "comment", "raw"])
const tagName = /\{%-?\s*(\w+)/g

/** The deepest block nesting of a source, from its tag names alone (cheap, before parsing). */
export const blockDepth = (source: string): number => {
  let depth = 0
  let deepest = 0
  for (const match of source.matchAll(tagName)) {
    const name = match[1]!
    if (blockTags.has(name)) deepest = Math.max(deepest, ++depth)
    else if (name.startsWith("end") && blockTags.has(name.slice(3))) depth = Math.max(0, depth - 1)
  }
  return deepest
}

const firstLine = (message: string) => message.split("\n")[0]!.slice(0, 300)

/** Why a source does not parse, or undefined when it does. */
export const templateProblem = (source: string, maxLength: number): string | undefined => {
  if (source.length > maxLength) return `is longer than ${maxLength} characters`
  if (blockDepth(source) > emailTemplateLimits.maxNesting) {
    return `nests blocks deeper than ${emailTemplateLimits.maxNesting} levels`
  }
  try {
    textEngine.parse(source)
    return undefined
  } catch (error) {
    const message = error instanceof Error ? firstLine(error.message) : "does not parse"
    return /tag "(include|render|layout|block)" not found/.test(message)
      ? `is not a valid Liquid template: ${message} (templates cannot include other templates or files)`
      : `is not a valid Liquid template: ${message}`
  }
}

/** Issues of a template's sent `subject` and `body` (paths `body.subject`, `body.body`); empty when both parse. */
export const templateIssues = (
  fields: { readonly subject?: string | undefined; readonly body?: string | undefined }
): ReadonlyArray<RequestIssue> => {
  const issues: Array<RequestIssue> = []
  if (fields.subject !== undefined) {
    const problem = templateProblem(fields.subject, emailTemplateLimits.subjectLength)
    if (problem !== undefined) issues.push({ path: "body.subject", message: problem })
  }
  if (fields.body !== undefined) {
    const problem = templateProblem(fields.body, emailTemplateLimits.bodyLength)
    if (problem !== undefined) issues.push({ path: "body.body", message: problem })
  }
  return issues
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------------------------

/** What a template may use (shared DECISIONS §17); a null renders empty, as does any unknown variable. */
export interface EmailVariables {
  readonly organization: { readonly name: string }
  readonly customer: {
    readonly firstName: string | null
    readonly lastName: string | null
    readonly email: string | null
  }
  readonly order: { readonly orderNumber: string | null; readonly placedAt: string | null }
  readonly products: ReadonlyArray<
    { readonly title: string; readonly url: string | null; readonly imageUrl: string | null }
  >
  readonly survey: { readonly url: string }
  readonly unsubscribe: { readonly url: string }
}

/** A rendered email: the subject (one line), the HTML part and its plain-text alternative. */
export interface RenderedEmail {
  readonly subject: string
  readonly html: string
  readonly text: string
}

/** A template that cannot be rendered: it does not parse, or it hit a bound. `field` is `subject` or `body`. */
export class EmailRenderError extends Schema.TaggedError<EmailRenderError>()("EmailRenderError", {
  field: Schema.Literals(["subject", "body"]),
  message: Schema.String
}) {}

const htmlTag = /<\/?[a-zA-Z][^>]*>/

/**
 * Whether a body is HTML: it holds an element tag. A body without one (as the guided setup made before its emails
 * were HTML) is plain text: it renders unescaped as the text part, and its HTML part is that text, escaped, in
 * paragraphs.
 */
export const isHtmlBody = (source: string): boolean => htmlTag.test(source)

type Parsed = ReturnType<Liquid["parse"]>

/** Sources kept parsed per engine and field: a flow sends its few templates many times. Cleared when full. */
const PARSED_KEPT = 64
const parsedKept = new Map<Liquid, Map<string, Parsed>>([[htmlEngine, new Map()], [textEngine, new Map()]])

/** What the bounded emitter throws once the output passes its bound. */
class OutputTooLong extends Error {}

/** liquidjs's default emitter (its `stringify` of an output), refusing output past `max` characters as it grows. */
class BoundedEmitter implements Emitter {
  buffer = ""
  readonly max: number
  constructor(max: number) {
    this.max = max
  }
  write(html: unknown): void {
    this.buffer += stringify(html)
    if (this.buffer.length > this.max) throw new OutputTooLong()
  }
}

const stringify = (value: unknown): string => {
  const v = toValue(value)
  if (typeof v === "string") return v
  if (v === null || v === undefined) return ""
  if (Array.isArray(v)) return v.map(stringify).join("")
  return String(v)
}

/**
 * liquidjs checks its render limit before every template node it renders, loop bodies included: counting those checks
 * bounds the work of a render by the template and its data alone. (Its own limit compares the wall clock.)
 */
const stepBudget = (steps: number): Context["renderLimit"] => {
  let left = steps
  return {
    check: () => {
      if (--left < 0) throw new Error(`template render step limit exceeded (${steps} steps)`)
    },
    use: () => {}
  } as unknown as Context["renderLimit"]
}

const renderWith = (
  engine: Liquid,
  field: "subject" | "body",
  source: string,
  variables: EmailVariables,
  maxOutput: number
): Result.Result<string, EmailRenderError> => {
  const kept = parsedKept.get(engine)!
  const key = `${field}:${source}`
  let parsed = kept.get(key)
  if (parsed === undefined) {
    const problem = templateProblem(
      source,
      field === "subject" ? emailTemplateLimits.subjectLength : emailTemplateLimits.bodyLength
    )
    if (problem !== undefined) return Result.fail(new EmailRenderError({ field, message: `The ${field} ${problem}.` }))
  }
  const tooLong = () =>
    Result.fail(
      new EmailRenderError({ field, message: `The rendered ${field} is longer than ${maxOutput} characters.` })
    )
  try {
    if (parsed === undefined) {
      parsed = engine.parse(source)
      if (kept.size >= PARSED_KEPT) kept.clear()
      kept.set(key, parsed)
    }
    const context = new Context(variables, engine.options, { sync: true }, {
      liquid: engine,
      renderLimit: stepBudget(emailTemplateLimits.renderSteps)
    })
    const emitter = new BoundedEmitter(maxOutput)
    toValueSync(engine.renderer.renderTemplates(parsed, context, emitter))
    return Result.succeed(emitter.buffer)
  } catch (error) {
    // liquidjs wraps what a node throws in a RenderError that keeps it as `originalError`.
    if (
      error instanceof OutputTooLong || (error as { originalError?: unknown }).originalError instanceof OutputTooLong
    ) {
      return tooLong()
    }
    const message = error instanceof Error ? firstLine(error.message) : "rendering failed"
    return Result.fail(new EmailRenderError({ field, message: `The ${field} could not be rendered: ${message}.` }))
  }
}

/** One line, at most the subject bound: a subject is a header, so line breaks never reach the message. */
const oneLine = (subject: string) =>
  subject.replace(/\s+/g, " ").trim().slice(0, emailTemplateLimits.subjectOutputLength)

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** The HTML part of a plain-text body: escaped, blank lines as paragraphs, line breaks kept. */
export const textToHtml = (text: string): string =>
  [
    "<!DOCTYPE html>",
    "<html><body style=\"font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1f2933\">",
    ...text.trim().split(/\n{2,}/).map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\n/g, "<br>\n")}</p>`),
    "</body></html>"
  ].join("\n")

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " ", "#39": "'" }
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X")) return safeCodePoint(Number.parseInt(name.slice(2), 16), whole)
    if (name.startsWith("#")) return safeCodePoint(Number.parseInt(name.slice(1), 10), whole)
    return entities[name.toLowerCase()] ?? whole
  })
const safeCodePoint = (code: number, fallback: string) =>
  Number.isFinite(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
    ? String.fromCodePoint(code)
    : fallback

/**
 * The plain-text alternative of a rendered HTML body: what a reader of the HTML sees, with each link's address after
 * its text (`Write a review (https://…)`), block elements on their own lines, head, style and script dropped.
 */
export const htmlToText = (html: string): string =>
  decodeEntities(
    html
      .replace(/<(head|style|script|title)\b[\s\S]*?<\/\1\s*>/gi, "")
      .replace(/<!--[\s\S]*?-->/g, "")
      // Still entity-encoded here (decoded once, at the end), so a `<` in a label cannot open a tag for the stripping.
      .replace(
        /<a\b[^>]*?\bhref\s*=\s*("([^"]*)"|'([^']*)')[^>]*>([\s\S]*?)<\/a\s*>/gi,
        (_, _q, dq: string | undefined, sq: string | undefined, inner: string) => {
          const href = (dq ?? sq ?? "").trim()
          const label = inner.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim()
          if (label === "" || decodeEntities(label) === decodeEntities(href)) return href
          return href === "" || href.startsWith("#") ? label : `${label} (${href})`
        }
      )
      .replace(
        /<img\b[^>]*?\balt\s*=\s*("([^"]*)"|'([^']*)')[^>]*>/gi,
        (_, _q, dq: string | undefined, sq: string | undefined) => dq ?? sq ?? ""
      )
      .replace(/\s+/g, " ")
      .replace(/<br\s*\/?>/gi, "\n")
      .replace(/<li\b[^>]*>/gi, "\n- ")
      .replace(/<\/?(p|div|h[1-6]|table|tr|ul|ol|blockquote|section|article|header|footer|hr)\b[^>]*>/gi, "\n\n")
      .replace(/<\/?(td|th)\b[^>]*>/gi, " ")
      .replace(/<[^>]*>/g, "")
  )
    .split("\n")
    .map((line) => line.replace(/[ \t]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/**
 * Renders a template's subject and body for one recipient. An HTML body renders with every output HTML-escaped and
 * its text part is derived from the result; a plain-text body (no element tag) is the text part as rendered, and its
 * HTML part that text, escaped.
 */
export const renderEmail = (
  template: { readonly subject: string; readonly body: string },
  variables: EmailVariables
): Result.Result<RenderedEmail, EmailRenderError> => {
  const subject = renderWith(
    textEngine,
    "subject",
    template.subject,
    variables,
    emailTemplateLimits.subjectOutputLength * 10
  )
  if (Result.isFailure(subject)) return Result.fail(subject.failure)
  if (isHtmlBody(template.body)) {
    const html = renderWith(htmlEngine, "body", template.body, variables, emailTemplateLimits.bodyOutputLength)
    if (Result.isFailure(html)) return Result.fail(html.failure)
    return Result.succeed({ subject: oneLine(subject.success), html: html.success, text: htmlToText(html.success) })
  }
  const text = renderWith(textEngine, "body", template.body, variables, emailTemplateLimits.bodyOutputLength)
  if (Result.isFailure(text)) return Result.fail(text.failure)
  return Result.succeed({
    subject: oneLine(subject.success),
    html: textToHtml(text.success),
    text: text.success.trim()
  })
}
