/**
 * The demo organization's storefront (shared DECISIONS §19; docs/DECISIONS.md §60): a small catalog, published reviews with merchant
 * replies, questions with answers, a site and a publishable key, so `npm start` then `/demo` shows a live widget.
 * Written through the use-cases, as a merchant's own calls would, acting as the organization's dashboard user.
 */
import { Catalog, Kernel, Organizations, Questions, Reviews } from "@feedback/core"
import { Effect, Schema } from "effect"

/** The product `/demo` shows; the others carry stars on the same page. */
export const DEMO_PRODUCT_SLUG = "everyday-ceramic-mug"

export const demoProducts = [
  {
    slug: DEMO_PRODUCT_SLUG,
    title: "Everyday Ceramic Mug",
    description: "A 350 ml stoneware mug, glazed inside and out, dishwasher safe."
  },
  { slug: "pour-over-kettle", title: "Pour-Over Kettle", description: "A 1 litre gooseneck kettle for slow coffee." },
  { slug: "linen-tea-towel", title: "Linen Tea Towel", description: "Washed linen, 50 × 70 cm." },
  { slug: "oak-serving-board", title: "Oak Serving Board", description: "Solid oak, oiled, 40 cm long." }
] as const

const customers = [
  ["ada@demo.example", "Ada", "Lovelace"],
  ["grace@demo.example", "Grace", "Hopper"],
  ["alan@demo.example", "Alan", "Turing"],
  ["katherine@demo.example", "Katherine", "Johnson"],
  ["edsger@demo.example", "Edsger", "Dijkstra"],
  ["barbara@demo.example", "Barbara", "Liskov"],
  ["donald@demo.example", "Donald", "Knuth"]
] as const

/** The demo's customers: `/demo?customer=…` signs only these. */
export const demoCustomerEmails: ReadonlyArray<string> = customers.map(([email]) => email)

type DemoReview = readonly [
  customer: number,
  product: string,
  rating: number,
  daysAgo: number,
  title: string,
  body: string,
  reply?: string
]

const mug = DEMO_PRODUCT_SLUG
const reviews: ReadonlyArray<DemoReview> = [
  [
    0,
    mug,
    5,
    2,
    "My new favourite mug",
    "Holds a proper amount of tea and keeps it warm. The glaze is lovely.",
    "Thank you, Ada! Enjoy the tea."
  ],
  [1, mug, 4, 5, "Solid and well made", "Heavier than I expected, in a good way. Wish it came in more colours."],
  [2, mug, 5, 9, "Perfect size", "Fits under my coffee machine, survives the dishwasher daily."],
  [
    3,
    mug,
    3,
    14,
    "Nice, but the handle is small",
    "Beautiful mug, though the handle is a bit tight for my hand.",
    "Thanks for the honest review, Katherine: a larger-handle version is on its way this spring."
  ],
  [4, mug, 5, 20, "Bought four more", "Ordered one to try and came back for a set. Consistent quality."],
  [5, mug, 4, 31, "Great everyday mug", "Does exactly what it should. Arrived well packed."],
  [
    6,
    mug,
    2,
    40,
    "Chipped on arrival",
    "The rim had a small chip. Support replaced it quickly, though.",
    "We are sorry about the chip, Donald, and glad the replacement arrived safely."
  ],
  [0, "pour-over-kettle", 5, 3, "Precise pouring", "The gooseneck makes a real difference to my pour-over."],
  [1, "pour-over-kettle", 4, 12, "Good kettle", "Heats evenly on gas and induction."],
  [2, "linen-tea-towel", 5, 6, "Soft and absorbent", "Gets better with every wash."],
  [3, "oak-serving-board", 4, 8, "Handsome board", "Needs oiling now and then, as the card says."]
]

const questions = [
  ["Is the mug microwave safe?", "Marta", "Yes: the glaze has no metal, so it is microwave and dishwasher safe."],
  ["How tall is it?", null, "It is 9.5 cm tall and 8.5 cm across, without the handle."],
  ["Do you sell matching saucers?", "Tom", "Not yet, but saucers in the same glaze are planned for next season."]
] as const

const daysAgo = (days: number, now: number) => new Date(now - days * 86_400_000).toISOString()

export interface DemoStorefront {
  readonly organizationId: Kernel.OrganizationId
}

/**
 * Seeds the storefront of the demo organization: `siteDomain` is the host name shoppers reach the API at, so the
 * organization's CORS rule allows that origin too. Runs inside the caller's unit of work.
 */
export const seedDemoStorefront = (organizationId: Kernel.OrganizationId, siteDomain: string) =>
  Effect.gen(function*() {
    const catalogs = yield* Catalog.Catalogs
    const reviewWrites = yield* Reviews.ReviewWrites
    const questionsService = yield* Questions.ProductQuestions
    const organizations = yield* Organizations.Organizations
    const now = Date.now()

    yield* catalogs.createSite(Schema.decodeUnknownSync(Catalog.SiteCreate)({ name: "Demo shop", domain: siteDomain }))
    const products = []
    for (const product of demoProducts) {
      products.push(yield* catalogs.createProduct(Schema.decodeUnknownSync(Catalog.ProductCreate)(product)))
    }
    for (const [email, firstName, lastName] of customers) {
      yield* catalogs.createCustomer(Schema.decodeUnknownSync(Catalog.CustomerCreate)({ email, firstName, lastName }))
    }
    yield* reviewWrites.import(
      Schema.decodeUnknownSync(Reviews.ImportRequest)({
        strict: true,
        data: reviews.map(([customer, product, rating, days, title, body, reply]) => ({
          customer: customers[customer]![0],
          product,
          rating,
          title,
          body,
          published: true,
          verifiedBuyer: customer % 3 !== 2,
          createdAt: daysAgo(days, now),
          ...(reply === undefined ? {} : {
            response: reply,
            responderName: "Demo shop",
            responseCreatedAt: daysAgo(Math.max(0, days - 1), now)
          })
        }))
      })
    )
    const shown = products[0]!
    for (const [body, askerName, answer] of questions) {
      const question = yield* questionsService.create(
        Schema.decodeUnknownSync(Questions.CreateProductQuestion)({
          productId: shown.id,
          body,
          askerName,
          published: true
        })
      )
      yield* questionsService.createAnswer(
        question.id,
        Schema.decodeUnknownSync(Questions.CreateProductQuestionAnswer)({ body: answer, published: true })
      )
    }
    yield* organizations.createPublishableKey(organizationId)
  }).pipe(
    // Fixed data through the merchant's own use-cases: a refusal is a bug of this file, not a condition to handle.
    Effect.orDie,
    Effect.provideService(
      Kernel.CurrentCaller,
      new Kernel.DashboardCaller({
        organizationId,
        userId: "00000000-0000-7000-8000-000000000000" as Kernel.UserId,
        name: "Demo seed"
      })
    )
  )
