/**
 * Stars, shown and chosen. Shown stars are one labelled image ("Rated 4.3 out of 5") whose filled layer is clipped to
 * the exact average; chosen stars are five native radio buttons (arrow keys move, the label says "3 stars"), drawn
 * as stars. Stars are SVG shapes, not text, so no page font can change them.
 */
import { h, uid } from "./Dom.ts"
import { format, type Messages } from "./Messages.ts"

const SVG = "http://www.w3.org/2000/svg"
const STAR_PATH = "M10 1.3l2.7 5.5 6 .9-4.35 4.25 1.03 6L10 15.1l-5.38 2.85 1.03-6L1.3 7.7l6-.9z"

const star = (): SVGSVGElement => {
  const svg = document.createElementNS(SVG, "svg")
  svg.setAttribute("viewBox", "0 0 20 20")
  svg.setAttribute("width", "1em")
  svg.setAttribute("height", "1em")
  svg.setAttribute("aria-hidden", "true")
  svg.setAttribute("focusable", "false")
  const path = document.createElementNS(SVG, "path")
  path.setAttribute("d", STAR_PATH)
  path.setAttribute("fill", "currentColor")
  svg.appendChild(path)
  return svg
}

const fiveStars = () => [star(), star(), star(), star(), star()]

/** One decimal, as shoppers read averages. */
export const roundedRating = (rating: number): string => (Math.round(rating * 10) / 10).toFixed(1)

/** The stars of a rating (0..5, fractions shown as partly filled stars), labelled for screen readers. */
export const starsImage = (rating: number, label: string): HTMLElement => {
  const filled = h("span", {}, ...fiveStars())
  // Set through the style object, not a style attribute, so a page's CSP without 'unsafe-inline' allows it.
  filled.style.width = `${Math.max(0, Math.min(5, rating)) * 20}%`
  return h("span", { class: "stars", role: "img", "aria-label": label }, ...fiveStars(), filled)
}

export const ratingLabel = (messages: Messages, rating: number) =>
  format(messages.starsLabel, { rating: roundedRating(rating) })

/**
 * Five radio buttons named `name`, drawn as stars; `onChange` hears the chosen rating. The group is a fieldset whose
 * legend is `legend`, so a screen reader announces "Your rating, 3 stars, radio button, 3 of 5".
 */
export const starsInput = (
  messages: Messages,
  legend: string,
  onChange: (rating: number) => void
): { readonly element: HTMLFieldSetElement; readonly value: () => number; readonly focus: () => void } => {
  const name = uid("rating")
  const labels: Array<HTMLLabelElement> = []
  const inputs: Array<HTMLInputElement> = []
  let value = 0
  const paint = (upTo: number) => labels.forEach((label, i) => label.classList.toggle("on", i < upTo))
  const options = [1, 2, 3, 4, 5].map((n) => {
    const id = uid("star")
    const input = h("input", {
      type: "radio",
      name,
      id,
      value: n,
      required: true,
      onchange: () => {
        value = n
        paint(n)
        onChange(n)
      }
    })
    const label = h(
      "label",
      {
        for: id,
        onmouseenter: () => paint(n),
        onmouseleave: () => paint(value)
      },
      star(),
      h("span", { class: "sr" }, n === 1 ? messages.starOptionOne : format(messages.starOption, { star: n }))
    )
    inputs.push(input)
    labels.push(label)
    return [input, label]
  })
  const element = h("fieldset", {}, h("legend", {}, legend), h("div", { class: "rate" }, ...options.flat()))
  return { element, value: () => value, focus: () => inputs[0]?.focus() }
}
