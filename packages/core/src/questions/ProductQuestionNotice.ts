/**
 * The email that tells an asker their product question was answered (docs/DECISIONS.md §6): to the asker's address only,
 * with the question and the answer, and nothing about any other question or asker.
 */
import type { ProductQuestionAnswer, ProductQuestionRecord } from "./ProductQuestion.ts"

/** Whether publishing an answer to `question` calls for an email: the first published answer, an address, consent. */
export const shouldNotifyAsker = (
  question: ProductQuestionRecord,
  answer: Pick<ProductQuestionAnswer, "published">
): boolean =>
  answer.published && question.publishedAnswerCount === 0 && question.askerEmail !== null && question.notifyByEmail

/** One line, no control characters (it goes into a mail header), at most `max` characters. */
const headerSafe = (s: string, max: number): string => {
  const line = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").replace(/\s+/g, " ").trim()
  const chars = [...line]
  return chars.length <= max ? line : chars.slice(0, max - 1).join("") + "…"
}

const quote = (text: string): string => text.replace(/\r\n?/g, "\n").split("\n").map((l) => `  ${l}`).join("\n")

export interface AnswerNoticeInput {
  readonly organizationName: string
  readonly productTitle: string | null
  readonly productUrl: string | null
  readonly question: Pick<ProductQuestionRecord, "body" | "askerName">
  readonly answer: Pick<ProductQuestionAnswer, "body" | "authorName">
}

export const renderAnswerNotice = (input: AnswerNoticeInput): { readonly subject: string; readonly text: string } => {
  const about = input.productTitle === null ? "your product question" : `your question about ${input.productTitle}`
  const subject = headerSafe(`${input.organizationName}: ${about} has an answer`, 150)
  const greeting = input.question.askerName === null ? "Hello," : `Hello ${headerSafe(input.question.askerName, 200)},`
  const answerer = input.answer.authorName ?? input.organizationName
  const lines = [
    greeting,
    "",
    `You asked ${input.organizationName}${input.productTitle === null ? "" : ` about ${input.productTitle}`}:`,
    "",
    quote(input.question.body),
    "",
    `${answerer} answered:`,
    "",
    quote(input.answer.body),
    ""
  ]
  if (input.productUrl !== null) lines.push(`See the product: ${input.productUrl}`, "")
  lines.push(
    "--",
    `You receive this email because you asked ${input.organizationName} to tell you when your question was answered.`,
    "You will not get another email about this question."
  )
  return { subject, text: lines.join("\n") }
}
