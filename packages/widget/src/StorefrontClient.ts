/**
 * The storefront API as the widget calls it (docs/STOREFRONT.md): the publishable key always in the query, so a
 * cross-origin page's preflight names its organization; plain GETs with no custom header need no preflight at all.
 * Only the API's own origin is ever called: the widget makes no other request.
 */
export interface Histogram {
  readonly "1": number
  readonly "2": number
  readonly "3": number
  readonly "4": number
  readonly "5": number
}
export interface ProductRating {
  readonly productId: string
  readonly slug: string
  readonly reviewCount: number
  readonly averageRating: number | null
  readonly histogram: Histogram
}
export interface StorefrontReview {
  readonly id: string
  readonly rating: number
  readonly title: string | null
  readonly body: string | null
  readonly authorName: string
  readonly verifiedBuyer: boolean
  readonly createdAt: string
  readonly response: { readonly body: string; readonly responderName: string; readonly createdAt: string } | null
}
export interface StorefrontQuestion {
  readonly id: string
  readonly body: string
  readonly askerName: string | null
  readonly createdAt: string
  readonly answers: ReadonlyArray<{
    readonly id: string
    readonly body: string
    readonly authorName: string | null
    readonly authorType: string
    readonly createdAt: string
  }>
}
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly nextCursor: string | null
}
export interface CustomerReview extends StorefrontReview {
  readonly productId: string
  readonly published: boolean
}
export interface Survey {
  readonly id: string
  readonly status: string
  readonly customer: { readonly firstName: string | null }
  readonly products: ReadonlyArray<{
    readonly id: string
    readonly title: string
    readonly imageUrl: string | null
    readonly url: string | null
    readonly reviewed: boolean
  }>
}

/** What the merchant's backend signed for the signed-in shopper (docs/STOREFRONT.md "Signed customer calls"). */
export interface SignedCustomer {
  readonly customerEmail: string
  readonly timestamp: string
  readonly signature: string
}

export class ApiError extends Error {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    super(`storefront API answered ${status}`)
    this.status = status
    this.body = body
  }
}

type Query = Record<string, string | number | null | undefined>

export class StorefrontClient {
  /** The API's base URL, without a trailing slash. */
  readonly base: string
  readonly key: string | undefined
  readonly customer: SignedCustomer | undefined
  constructor(base: string, key: string | undefined, customer: SignedCustomer | undefined) {
    this.base = base
    this.key = key
    this.customer = customer
  }

  private url(path: string, query: Query, signed: boolean): string {
    const params = new URLSearchParams()
    if (this.key !== undefined) params.set("apiPublishableKey", this.key)
    for (const [name, value] of Object.entries(query)) {
      if (value !== null && value !== undefined) params.set(name, String(value))
    }
    if (signed && this.customer !== undefined) {
      params.set("customerEmail", this.customer.customerEmail)
      params.set("timestamp", this.customer.timestamp)
      params.set("signature", this.customer.signature)
    }
    const search = params.toString()
    return `${this.base}${path}${search === "" ? "" : `?${search}`}`
  }

  private async call<A>(url: string, init: RequestInit): Promise<A> {
    // No cookies: the API authenticates the key, never a session, and the page's cookies are none of its business.
    const response = await fetch(url, { ...init, credentials: "omit", mode: "cors" })
    const body: unknown = response.status === 204 ? null : await response.json().catch(() => null)
    if (!response.ok) throw new ApiError(response.status, body)
    return body as A
  }

  get<A>(path: string, query: Query = {}, signed = false): Promise<A> {
    return this.call(this.url(path, query, signed), { method: "GET" })
  }

  /** A JSON POST with an idempotency key, so a retry after a lost answer does not submit twice. */
  post<A>(path: string, body: unknown, idempotencyKey: string, signed = false): Promise<A> {
    return this.call(this.url(path, {}, signed), {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify(body)
    })
  }

  ratings(products: ReadonlyArray<string>): Promise<{ readonly data: ReadonlyArray<ProductRating> }> {
    return this.get("/storefront/ratings", { products: products.join(",") })
  }

  reviews(product: string, query: Query): Promise<Page<StorefrontReview>> {
    return this.get(`/storefront/products/${encodeURIComponent(product)}/reviews`, query)
  }

  questions(product: string, cursor: string | null): Promise<Page<StorefrontQuestion>> {
    return this.get(`/storefront/products/${encodeURIComponent(product)}/questions`, { limit: 5, cursor })
  }
}

/** A fresh idempotency key for one submission (retries of it reuse it). */
export const idempotencyKey = (): string =>
  typeof crypto.randomUUID === "function"
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")
