/**
 * Building elements without markup strings: every text goes in as a text node, so nothing a shopper or merchant
 * wrote is ever parsed as HTML, and no `innerHTML`, `eval` or inline handler is needed (a strict CSP allows it).
 */
type Child = Node | string | number | null | undefined | false
type Attribute = string | number | boolean | null | undefined | ((event: Event) => void)

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, Attribute> = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value)
    else if (value === true) element.setAttribute(name, "")
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value))
  }
  append(element, ...children)
  return element
}

export const append = (parent: Node, ...children: ReadonlyArray<Child | ReadonlyArray<Child>>): void => {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)))
  }
}

/** Replaces an element's content. */
export const replace = (parent: Element, ...children: ReadonlyArray<Child | ReadonlyArray<Child>>): void => {
  parent.replaceChildren()
  append(parent, ...children)
}

let counter = 0
/** A document-unique id for label/field and aria pairs inside one shadow root. */
export const uid = (prefix: string): string => `${prefix}-${++counter}`
