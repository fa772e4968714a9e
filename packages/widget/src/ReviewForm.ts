/**
 * The review form (shared DECISIONS §18 `POST /storefront/reviews`): stars, title, body, name and email. When the
 * page carries a signed customer, the email is the signed one (shown, not asked) and the call is signed, so the
 * review is linked to that customer and marked a verified buyer when they bought the product.
 */
import { h } from "./Dom.ts"
import { field, statusRegion, submissionProblem, validate } from "./Forms.ts"
import { format, type Messages } from "./Messages.ts"
import { starsInput } from "./Stars.ts"
import { idempotencyKey, type StorefrontClient } from "./StorefrontClient.ts"

/** The product as the API accepts it: by id once the ratings named it, else by the slug or id the page gave. */
export type ProductRef = { readonly productId: string } | { readonly productSlug: string }

export const reviewForm = (
  client: StorefrontClient,
  messages: Messages,
  product: () => ProductRef,
  onDone: (published: boolean, message: string) => void,
  onCancel: () => void
): HTMLFormElement => {
  const renderedAt = new Date().toISOString()
  const ratingError = h("p", { class: "error", hidden: true })
  const rating = starsInput(messages, messages.yourRating, () => {
    ratingError.hidden = true
  })
  rating.element.append(ratingError)
  const title = field(messages.reviewTitle, { maxLength: 500 })
  const body = field(messages.reviewBody, { multiline: true, maxLength: 20_000 })
  const name = field(messages.authorName, { required: true, maxLength: 100, autocomplete: "name" })
  const signed = client.customer
  const email = signed === undefined
    ? field(messages.email, { type: "email", required: true, maxLength: 320, autocomplete: "email" })
    : undefined
  const status = statusRegion()
  const submit = h("button", { type: "submit", class: "primary" }, messages.submitReview)
  // One key per filled-in form: a retry after a lost answer is answered from the first attempt.
  let key = idempotencyKey()

  const form = h(
    "form",
    { novalidate: true, "aria-label": messages.writeReview },
    rating.element,
    title.element,
    body.element,
    name.element,
    email?.element,
    signed === undefined
      ? null
      : h("p", { class: "meta" }, format(messages.reviewingAs, { email: signed.customerEmail })),
    h("div", { class: "actions" }, submit, h("button", { type: "button", onclick: onCancel }, messages.cancel)),
    status
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const fieldsRight = validate(messages, email === undefined ? [name] : [name, email])
    if (rating.value() === 0) {
      ratingError.textContent = messages.ratingRequired
      ratingError.hidden = false
      rating.focus()
      return
    }
    if (!fieldsRight) return
    submit.disabled = true
    status.textContent = messages.sending
    const payload = {
      ...product(),
      rating: rating.value(),
      ...(title.value() === "" ? {} : { title: title.value() }),
      ...(body.value() === "" ? {} : { body: body.value() }),
      authorName: name.value(),
      ...(email === undefined ? {} : { email: email.value() }),
      formRenderedAt: renderedAt
    }
    client.post<{ readonly id: string; readonly published: boolean }>(
      "/storefront/reviews",
      payload,
      key,
      signed !== undefined
    ).then(
      (answer) => {
        key = idempotencyKey()
        form.reset()
        onDone(answer.published, answer.published ? messages.reviewPublished : messages.reviewPending)
      },
      (error: unknown) => {
        submit.disabled = false
        status.textContent = submissionProblem(messages, error)
      }
    )
  })
  return form
}
