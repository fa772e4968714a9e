/**
 * A product's published questions with their published answers, a page at a time, and the ask form
 * (`POST /storefront/questions`: the question arrives unpublished in the merchant's queue).
 */
import { append, h, replace } from "./Dom.ts"
import { field, statusRegion, submissionProblem, validate } from "./Forms.ts"
import { format, type Messages } from "./Messages.ts"
import type { ProductRef } from "./ReviewForm.ts"
import { idempotencyKey, type StorefrontClient, type StorefrontQuestion } from "./StorefrontClient.ts"

export const questionsSection = (
  client: StorefrontClient,
  messages: Messages,
  product: string,
  productRef: () => ProductRef,
  date: (iso: string) => string
): HTMLElement => {
  const list = h("ul", { class: "list" })
  const more = h("button", { type: "button", hidden: true }, messages.moreQuestions)
  const status = statusRegion()
  const askButton = h("button", { type: "button", "aria-expanded": "false" }, messages.askQuestion)
  const formSlot = h("div", {})
  let cursor: string | null = null

  const item = (q: StorefrontQuestion) =>
    h(
      "li",
      { class: "item" },
      h("p", {}, h("strong", {}, q.body)),
      h(
        "p",
        { class: "meta" },
        q.askerName === null ? null : [format(messages.askedBy, { name: q.askerName }), " · "],
        date(q.createdAt)
      ),
      q.answers.map((a) =>
        h(
          "div",
          { class: "reply" },
          h(
            "p",
            { class: "meta" },
            a.authorType === "merchant" || a.authorName === null
              ? messages.storeAnswer
              : format(messages.answerBy, { name: a.authorName })
          ),
          h("p", {}, a.body)
        )
      )
    )

  const load = () =>
    client.questions(product, cursor).then((page) => {
      if (cursor === null && page.data.length === 0) replace(list, h("li", { class: "meta" }, messages.noQuestions))
      else append(list, page.data.map(item))
      cursor = page.nextCursor
      more.hidden = cursor === null
    }, () => replace(list, h("li", { class: "meta" }, messages.loadError)))

  more.addEventListener("click", () => {
    more.disabled = true
    void load().then(() => {
      more.disabled = false
    })
  })

  const closeForm = () => {
    replace(formSlot)
    askButton.setAttribute("aria-expanded", "false")
    askButton.focus()
  }
  askButton.addEventListener("click", () => {
    if (formSlot.firstChild !== null) return closeForm()
    askButton.setAttribute("aria-expanded", "true")
    status.textContent = ""
    const body = field(messages.question, { multiline: true, required: true, maxLength: 500 })
    const name = field(messages.askerName, { maxLength: 200, autocomplete: "name" })
    const email = field(messages.askerEmail, { type: "email", maxLength: 320, autocomplete: "email" })
    const submit = h("button", { type: "submit", class: "primary" }, messages.submitQuestion)
    const key = idempotencyKey()
    const form = h(
      "form",
      { novalidate: true, "aria-label": messages.askQuestion },
      body.element,
      name.element,
      email.element,
      h("div", { class: "actions" }, submit, h("button", { type: "button", onclick: closeForm }, messages.cancel))
    )
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      if (!validate(messages, [body, name, email])) return
      submit.disabled = true
      status.textContent = messages.sending
      client.post("/storefront/questions", {
        ...productRef(),
        body: body.value(),
        ...(name.value() === "" ? {} : { askerName: name.value() }),
        ...(email.value() === "" ? {} : { askerEmail: email.value() })
      }, key).then(() => {
        closeForm()
        status.textContent = messages.questionThanks
      }, (error: unknown) => {
        submit.disabled = false
        status.textContent = submissionProblem(messages, error)
      })
    })
    replace(formSlot, form)
    body.control.focus()
  })

  void load()
  return h(
    "section",
    { "aria-label": messages.questionsHeading },
    h("h3", {}, messages.questionsHeading),
    h("div", { class: "toolbar" }, askButton),
    formSlot,
    status,
    list,
    more
  )
}
