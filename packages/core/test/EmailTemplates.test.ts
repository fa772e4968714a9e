import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it, vi } from "vitest"
import {
  blockDepth,
  type EmailVariables,
  emailTemplateLimits,
  htmlToText,
  type RenderedEmail,
  renderEmail,
  templateIssues,
  templateProblem
} from "../src/setup/EmailTemplates.ts"

const variables: EmailVariables = {
  organization: { name: "Acme & Co" },
  customer: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
  order: { orderNumber: "1001", placedAt: "2026-03-01T10:00:00.000Z" },
  products: [
    { title: "Everyday mug", url: "https://shop.example/mug", imageUrl: "https://cdn.example/mug.jpg" },
    { title: "Tea <towel>", url: null, imageUrl: null }
  ],
  survey: { url: "https://api.example/r/abcdefghijklmnopqrstuv" },
  unsubscribe: { url: "https://api.example/u/ABCDEFGHIJKLMNOPQRSTUV" }
}

const rendered = (subject: string, body: string, vars: EmailVariables = variables): RenderedEmail => {
  const result = renderEmail({ subject, body }, vars)
  if (Result.isFailure(result)) throw new Error(`expected a render, got: ${result.failure.message}`)
  return result.success
}
const renderFailure = (subject: string, body: string) => {
  const result = renderEmail({ subject, body }, variables)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("validation on save", () => {
  it("a template that parses has no issue; one that does not is named by its field", () => {
    expect(
      templateIssues({
        subject: "Hi {{ customer.firstName }}",
        body: "<p>{% for p in products %}{{ p.title }}{% endfor %}</p>"
      })
    ).toEqual([])
    expect(templateIssues({})).toEqual([])
    const issues = templateIssues({ subject: "Hi {{ customer.firstName", body: "{% if x %}never closed" })
    expect(issues.map((i) => i.path)).toEqual(["body.subject", "body.body"])
    for (const issue of issues) expect(issue.message).toMatch(/^is not a valid Liquid template: /)
    expect(templateIssues({ body: "{% for %}" }).map((i) => i.path)).toEqual(["body.body"])
    expect(templateIssues({ body: "{{ name | no_such_filter }}" })[0]?.message).toContain("no_such_filter")
  })

  it("tags that read other templates or files do not exist", () => {
    for (
      const source of [
        "{% include 'secrets' %}",
        "{% render '/etc/passwd' %}",
        "{% layout 'base' %}",
        "{% block x %}{% endblock %}",
        "{%- include 'x' -%}"
      ]
    ) {
      const problem = templateProblem(source, 1_000)
      expect(problem, source).toContain("cannot include other templates or files")
    }
  })

  it("sources longer than the text limits and blocks nested too deep are refused before parsing", () => {
    expect(templateProblem("x".repeat(emailTemplateLimits.bodyLength + 1), emailTemplateLimits.bodyLength)).toContain(
      "longer than"
    )
    expect(templateIssues({ subject: "x".repeat(emailTemplateLimits.subjectLength + 1) })[0]?.path).toBe("body.subject")
    const nested = (n: number) => "{% if a %}".repeat(n) + "x" + "{% endif %}".repeat(n)
    expect(blockDepth(nested(7))).toBe(7)
    expect(blockDepth("{% if a %}{% endif %}{% for x in y %}{% if b %}{% endif %}{% endfor %}")).toBe(2)
    expect(templateProblem(nested(emailTemplateLimits.maxNesting), 50_000)).toBeUndefined()
    expect(templateProblem(nested(emailTemplateLimits.maxNesting + 1), 50_000)).toContain("deeper than")
    // Deep enough to exhaust the parser's stack if it got there: refused before parsing.
    expect(templateProblem(nested(2_000), 50_000)).toContain("deeper than")
  })
})

describe("rendering", () => {
  it("fills every documented variable; unknown and null variables render empty", () => {
    const email = rendered(
      "{{ customer.firstName }}, your order {{ order.orderNumber }} at {{ organization.name }}{{ nothing.here }}",
      [
        "{{ customer.firstName }} {{ customer.lastName }} <{{ customer.email }}> placed {{ order.placedAt | date: '%Y-%m-%d' }}",
        "{% for p in products %}{{ p.title }}|{{ p.url }}|{{ p.imageUrl }};{% endfor %}",
        "{{ survey.url }} {{ unsubscribe.url }} [{{ customer.middleName }}{{ order.total }}]"
      ].join("\n")
    )
    expect(email.subject).toBe("Ada, your order 1001 at Acme & Co")
    expect(email.text).toBe([
      "Ada Lovelace <ada@example.com> placed 2026-03-01",
      "Everyday mug|https://shop.example/mug|https://cdn.example/mug.jpg;Tea <towel>||;",
      "https://api.example/r/abcdefghijklmnopqrstuv https://api.example/u/ABCDEFGHIJKLMNOPQRSTUV []"
    ].join("\n"))
    const anonymous = rendered("Hi {{ customer.firstName }}", "Hi {{ customer.firstName | default: 'there' }}", {
      ...variables,
      customer: { firstName: null, lastName: null, email: null }
    })
    expect(anonymous.subject).toBe("Hi")
    expect(anonymous.text).toBe("Hi there")
  })

  it("an HTML body escapes every output, `raw` included, and gets a plain-text part with link addresses", () => {
    const email = rendered(
      "{{ organization.name }}",
      [
        "<html><head><style>p { color: red }</style></head><body>",
        "<h1>Hi {{ customer.firstName }}</h1>",
        "<p>{% for p in products %}<b>{{ p.title }}</b><br>{% endfor %}</p>",
        "<p><a href=\"{{ survey.url }}\">Write a review</a> &middot; {{ organization.name | raw }}</p>",
        "<p><a href=\"{{ unsubscribe.url }}\">{{ unsubscribe.url }}</a></p>",
        "</body></html>"
      ].join("\n"),
      { ...variables, customer: { ...variables.customer, firstName: "<script>alert(1)</script>" } }
    )
    expect(email.html).toContain("Hi &lt;script&gt;alert(1)&lt;/script&gt;")
    expect(email.html).toContain("<b>Tea &lt;towel&gt;</b>")
    expect(email.html).toContain("Acme &amp; Co</p>")
    expect(email.html).not.toContain("<script>")
    expect(email.subject).toBe("Acme & Co")
    expect(email.text).toBe([
      "Hi <script>alert(1)</script>",
      "",
      "Everyday mug",
      "Tea <towel>",
      "",
      "Write a review (https://api.example/r/abcdefghijklmnopqrstuv) &middot; Acme & Co",
      "",
      "https://api.example/u/ABCDEFGHIJKLMNOPQRSTUV"
    ].join("\n"))
  })

  it("a link whose label holds markup characters keeps its text and address in the plain-text part", () => {
    const email = rendered(
      "x",
      "<p><a href=\"{{ survey.url }}\">{{ products[1].title }}</a> after</p><p>{{ customer.firstName }}</p>"
    )
    expect(email.text).toBe("Tea <towel> (https://api.example/r/abcdefghijklmnopqrstuv) after\n\nAda")
  })

  it("a plain-text body is the text part as rendered and an escaped HTML part", () => {
    const email = rendered("Hi", "Hi {{ customer.firstName }},\n\nThanks for {{ products[1].title }}.\nBye")
    expect(email.text).toBe("Hi Ada,\n\nThanks for Tea <towel>.\nBye")
    expect(email.html).toContain("<p>Hi Ada,</p>")
    expect(email.html).toContain("<p>Thanks for Tea &lt;towel&gt;.<br>\nBye</p>")
  })

  it("a subject is one line whatever its variables hold", () => {
    const email = rendered("Hello {{ customer.firstName }}\r\nBcc: victim@example.com", "x", {
      ...variables,
      customer: { ...variables.customer, firstName: "Ada\r\nX-Injected: yes" }
    })
    expect(email.subject).toBe("Hello Ada X-Injected: yes Bcc: victim@example.com")
    expect(email.subject).not.toMatch(/[\r\n]/)
  })

  it("hostile templates fail fast with a message naming the bound, and never stall", () => {
    const hostile: ReadonlyArray<readonly [string, string, RegExp]> = [
      [
        "huge nested loops",
        "{% for i in (1..1000000000) %}{% for j in (1..1000000000) %}x{% endfor %}{% endfor %}",
        /limit/
      ],
      [
        "a long-running loop",
        "{% for i in (1..1000) %}{% for j in (1..1000) %}{% for k in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}",
        /limit/
      ],
      [
        "a doubling string",
        "{% assign s = 'xxxxxxxxxx' %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s }}",
        /limit/
      ],
      ["a tablerow flood", "{% tablerow i in (1..10000000) %}{{ i }}{% endtablerow %}", /limit/],
      ["an include", "{% include 'x' %}", /cannot include/],
      ["deep nesting", "{% if a %}".repeat(2_000) + "{% endif %}".repeat(2_000), /deeper than/]
    ]
    // Each is stopped by a bound (render steps, allocations, nesting, missing tag): the test's timeout would catch a stall.
    for (const [name, body, message] of hostile) {
      const failure = renderFailure("ok", `<p>${body}</p>`)
      expect(failure.field, name).toBe("body")
      expect(failure.message, name).toMatch(message)
    }
    expect(renderFailure("{% include 'x' %}", "ok").field).toBe("subject")
  })

  it("render work is counted, not timed: a render descheduled for seconds still succeeds", () => {
    // Every read of the clock a minute later than the last: as a loaded machine may show a synchronous render.
    let clock = performance.now()
    const spy = vi.spyOn(performance, "now").mockImplementation(() => (clock += 60_000))
    try {
      const email = rendered(
        "Hi {{ customer.firstName }}",
        "<p>{% for p in products %}{% for q in products %}<b>{{ p.title }}</b>{% endfor %}{% endfor %}</p>"
      )
      expect(email.subject).toBe("Hi Ada")
      expect(email.text).toContain("Everyday mug")
    } finally {
      spy.mockRestore()
    }
  })

  it("loops over a reused array (no allocation per turn) stop at the step bound", () => {
    const letters = "x".repeat(1_000)
    const failure = renderFailure(
      "ok",
      `{% assign a = '${letters}' | split: '' %}{% for i in a %}{% for j in a %}{% for k in a %}{% endfor %}{% endfor %}{% endfor %}`
    )
    expect(failure.message).toMatch(new RegExp(`step limit exceeded \\(${emailTemplateLimits.renderSteps} steps\\)`))
    // Just under the bound renders: a turn of the inner loop with an empty body is one step, of the outer 1,001.
    const turns = Math.floor(emailTemplateLimits.renderSteps / 1_001) - 1
    expect(rendered("ok", `{% for i in (1..${turns}) %}{% for j in (1..999) %}{% endfor %}{% endfor %}`).text).toBe("")
  })

  it("output beyond the bound is refused", () => {
    const failure = renderFailure("ok", "{% for i in (1..600) %}{% for j in (1..1000) %}x{% endfor %}{% endfor %}")
    expect(failure.message).toMatch(/longer than|limit/)
  })

  it("property: any text without Liquid markup renders as itself in the text part, and never throws", () => {
    const plain = fc.string({ maxLength: 200 }).filter((s) => !/[{}%<>&]/.test(s))
    fc.assert(
      fc.property(plain, (text) => {
        const email = rendered("Subject", text)
        expect(email.text).toBe(text.trim())
      }),
      { numRuns: 200 }
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 100 }), (body, subject) => {
        // Arbitrary sources either render or fail with an EmailRenderError; nothing escapes as a throw.
        const result = renderEmail({ subject, body }, variables)
        if (Result.isFailure(result)) expect(result.failure._tag).toBe("EmailRenderError")
      }),
      { numRuns: 300 }
    )
  })

  it("property: variable values never reach the HTML part unescaped", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (name) => {
        const email = rendered("x", "<p>{{ customer.firstName }}</p>", {
          ...variables,
          customer: { ...variables.customer, firstName: name }
        })
        const inner = email.html.slice(3, -4)
        expect(inner).not.toMatch(/[<>"]/)
        expect(htmlToText(email.html)).toBe(name.replace(/\s+/g, " ").trim())
      }),
      { numRuns: 300 }
    )
  })
})
