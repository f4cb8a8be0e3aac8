import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/** A purchase invoice's item names its text as every other document's item does: `item_description`. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE purchase_invoice_items RENAME COLUMN description TO item_description;
`))
