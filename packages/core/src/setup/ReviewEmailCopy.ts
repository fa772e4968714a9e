/**
 * The emails the guided reviews setup creates (shared DECISIONS §17): an HTML review request and a reminder per
 * style, as Liquid templates over the variables of `EmailTemplates.ts`. Each one names the order's products, links
 * to `survey.url` with a button and to `unsubscribe.url` in its footer; the plain-text part is derived from the HTML
 * when it is rendered (`renderEmail`). Inline styles and a table layout, because mail clients ignore style sheets.
 */

export interface ReviewEmailCopy {
  readonly subject: string
  readonly heading: string
  /** Paragraphs before the product list (plain text with Liquid outputs; each becomes a `<p>`). */
  readonly intro: ReadonlyArray<string>
  readonly button: string
  /** Paragraphs after the button. */
  readonly outro: ReadonlyArray<string>
}

const text = "font-family:Arial,Helvetica,sans-serif;color:#1f2933"
const paragraph = (p: string) => `<p style="margin:0 0 16px;font-size:15px;line-height:1.6">${p}</p>`

/** The shared layout: header, copy, the products, the button, sign-off and the unsubscribe footer. */
export const reviewEmailHtml = (copy: ReviewEmailCopy): string =>
  [
    `<!DOCTYPE html>`,
    `<html lang="en">`,
    `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{ organization.name }}</title></head>`,
    `<body style="margin:0;padding:0;background:#f4f5f7">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7"><tr><td align="center" style="padding:24px 12px">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;${text}">`,
    `<tr><td style="padding:28px 32px 8px;font-size:13px;font-weight:bold;letter-spacing:1px;text-transform:uppercase;color:#52606d">{{ organization.name }}</td></tr>`,
    `<tr><td style="padding:8px 32px 0">`,
    `<h1 style="margin:0 0 16px;font-size:22px;line-height:1.3">${copy.heading}</h1>`,
    ...copy.intro.map(paragraph),
    `</td></tr>`,
    `{% for product in products %}`,
    `<tr><td style="padding:0 32px 12px"><table role="presentation" cellpadding="0" cellspacing="0"><tr>`,
    `{% if product.imageUrl != blank %}<td width="64" style="padding-right:12px"><img src="{{ product.imageUrl }}" width="64" height="64" alt="" style="display:block;border-radius:4px"></td>{% endif %}`,
    `<td style="font-size:15px;font-weight:bold">{% if product.url != blank %}<a href="{{ product.url }}" style="color:#1f2933;text-decoration:none">{{ product.title }}</a>{% else %}{{ product.title }}{% endif %}</td>`,
    `</tr></table></td></tr>`,
    `{% endfor %}`,
    `<tr><td style="padding:12px 32px 24px">`,
    `<a href="{{ survey.url }}" style="display:inline-block;background:#1f6feb;color:#ffffff;text-decoration:none;font-weight:bold;font-size:15px;padding:12px 24px;border-radius:6px">${copy.button}</a>`,
    `</td></tr>`,
    `<tr><td style="padding:0 32px 8px">`,
    ...copy.outro.map(paragraph),
    paragraph(`Thank you,<br>The {{ organization.name }} team`),
    `</td></tr>`,
    `<tr><td style="padding:16px 32px 28px;border-top:1px solid #e4e7eb;font-size:12px;line-height:1.5;color:#7b8794">`,
    `You are receiving this email because you ordered from {{ organization.name }}{% if order.orderNumber != blank %} (order {{ order.orderNumber }}){% endif %}. `,
    `<a href="{{ unsubscribe.url }}" style="color:#7b8794">Unsubscribe from review requests</a>.`,
    `</td></tr>`,
    `</table>`,
    `</td></tr></table>`,
    `</body>`,
    `</html>`
  ].join("\n")

const hi = `Hi {{ customer.firstName | default: "there" }},`

/** Copy per style and email: `photo` asks for photos, `minimal` says only what is needed. */
export const reviewEmailCopy = {
  standard: {
    request: {
      subject: `How was your order{% if customer.firstName != blank %}, {{ customer.firstName }}{% endif %}?`,
      heading: hi,
      intro: [
        "Thank you for shopping with {{ organization.name }}. We hope you are enjoying your order:"
      ],
      button: "Write your review",
      outro: [
        "It only takes a minute, and your review helps other shoppers choose with confidence and helps us keep improving."
      ]
    },
    reminder: {
      subject: "A quick reminder: how was your order?",
      heading: hi,
      intro: [
        "A little while ago we asked what you thought of your recent order. If you have a moment, we would still love to hear from you:"
      ],
      button: "Write your review",
      outro: [
        "If you have already left a review, thank you, and please ignore this email."
      ]
    }
  },
  minimal: {
    request: {
      subject: "Review your order",
      heading: `How did we do?`,
      intro: [],
      button: "Review",
      outro: []
    },
    reminder: {
      subject: "Still time to review your order",
      heading: `One more chance to review`,
      intro: [],
      button: "Review",
      outro: []
    }
  },
  photo: {
    request: {
      subject: `Show us your order{% if customer.firstName != blank %}, {{ customer.firstName }}{% endif %}`,
      heading: hi,
      intro: [
        "Thank you for your order from {{ organization.name }}. We would love to see it in action:"
      ],
      button: "Write a review and add photos",
      outro: [
        "Real photos from real customers are what other shoppers find most helpful. A quick snapshot and a few words are all it takes."
      ]
    },
    reminder: {
      subject: "Got a photo of your order? We would love to see it",
      heading: hi,
      intro: [
        "There is still time to review your recent order and share a photo:"
      ],
      button: "Write a review and add photos",
      outro: [
        "A quick snapshot and a few words help other shoppers more than anything we could write. If you have already left a review, thank you, and please ignore this email."
      ]
    }
  }
} as const satisfies {
  readonly [style: string]: { readonly request: ReviewEmailCopy; readonly reminder: ReviewEmailCopy }
}
