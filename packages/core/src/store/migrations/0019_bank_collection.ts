import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Collecting receivables through the bank: an account's PIX key and boleto agreement (`br_data`),
 * and on a receivable the PIX txid and the boleto's our number that identify its payment in a
 * statement line or a CNAB return file (unique per tenant, so a payment names one receivable).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE financial_accounts ADD COLUMN br_data jsonb NOT NULL DEFAULT '{}';
ALTER TABLE receivables ADD COLUMN pix_txid text;
ALTER TABLE receivables ADD COLUMN our_number text;
ALTER TABLE receivables ADD COLUMN our_number_sequence text;
CREATE UNIQUE INDEX receivables_pix_txid_key ON receivables (tenant_id, pix_txid) WHERE pix_txid IS NOT NULL;
CREATE UNIQUE INDEX receivables_our_number_key ON receivables (tenant_id, financial_account_id, our_number) WHERE our_number IS NOT NULL;
CREATE INDEX financial_transactions_unreconciled_idx ON financial_transactions (tenant_id, account_id, posted_at) WHERE NOT is_reconciled AND deleted_at IS NULL;
CREATE INDEX receivables_open_due_idx ON receivables (tenant_id, due_date) WHERE status IN ('pending', 'partial') AND deleted_at IS NULL;
CREATE INDEX payables_open_due_idx ON payables (tenant_id, due_date) WHERE status IN ('pending', 'partial') AND deleted_at IS NULL;
`))
