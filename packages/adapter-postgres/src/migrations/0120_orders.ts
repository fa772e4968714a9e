import type { Migration } from "../kernel/Migrations.ts"

/**
 * Orders and their lines (docs/DECISIONS.md §48). Keys lead with organization_id; a line refers to its product, so a
 * product that orders still name cannot be deleted (409), as for reviews. The list sorts of `GET /orders`
 * (`placedAt`, `createdAt`, `updatedAt`, each with the id) have their own keyset index.
 */
export const ordersMigration: Migration = {
  id: 120,
  name: "orders",
  statements: [
    `CREATE TABLE orders (
      organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
      id uuid NOT NULL,
      external_id text,
      order_number text,
      site_id uuid,
      customer_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'fulfilled', 'delivered', 'cancelled')),
      placed_at timestamptz NOT NULL,
      fulfilled_at timestamptz,
      delivered_at timestamptz,
      cancelled_at timestamptz,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, id),
      FOREIGN KEY (organization_id, customer_id) REFERENCES customers (organization_id, id),
      FOREIGN KEY (organization_id, site_id) REFERENCES sites (organization_id, id)
    )`,
    `CREATE UNIQUE INDEX orders_external_id ON orders (organization_id, external_id) WHERE external_id IS NOT NULL`,
    `CREATE INDEX orders_by_created_at ON orders (organization_id, created_at, id)`,
    `CREATE INDEX orders_by_updated_at ON orders (organization_id, updated_at, id)`,
    `CREATE INDEX orders_by_placed_at ON orders (organization_id, placed_at, id)`,
    `CREATE INDEX orders_by_customer ON orders (organization_id, customer_id)`,
    `CREATE TABLE order_lines (
      organization_id uuid NOT NULL,
      order_id uuid NOT NULL,
      position integer NOT NULL,
      product_id uuid NOT NULL,
      product_variant_id uuid,
      quantity integer NOT NULL CHECK (quantity > 0),
      PRIMARY KEY (organization_id, order_id, position),
      FOREIGN KEY (organization_id, order_id) REFERENCES orders (organization_id, id) ON DELETE CASCADE,
      FOREIGN KEY (organization_id, product_id) REFERENCES products (organization_id, id)
    )`,
    `CREATE INDEX order_lines_by_product ON order_lines (organization_id, product_id)`
  ]
}
