/**
 * Filter columns of the related product (`p`) and customer (`c`) that review and question lists share
 * (spec: the `product.*` and `customer.*` filterable fields). Each list adds its own `product.id` / `customer.id`,
 * which may read the foreign key on the main table instead.
 */
export const relatedProductColumns = {
  "product.slug": "p.slug",
  "product.title": "p.title",
  "product.metadata": "p.metadata",
  "product.createdAt": "p.created_at"
} as const

export const relatedCustomerColumns = {
  "customer.email": "c.email",
  "customer.firstName": "c.first_name",
  "customer.lastName": "c.last_name",
  "customer.metadata": "c.metadata",
  "customer.emailOptOut": "c.email_opt_out",
  "customer.emailOptOutSource": "c.email_opt_out_source",
  "customer.createdAt": "c.created_at"
} as const

export const relatedCatalogColumns = { ...relatedProductColumns, ...relatedCustomerColumns } as const
