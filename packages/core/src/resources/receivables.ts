import { Schema } from "effect"
import { column, type ResourceRef, stored } from "../engine/field.js"
import type { RecordType } from "../engine/resource.js"
import { reference } from "./common.js"
import { boletoAction } from "./boleto-charge.js"
import { pixAction } from "./pix-charge.js"
import { customers } from "./customers.js"
import { resourceNamed } from "../engine/registry.js"
import { defineSettlement } from "./settlements.js"


export const receivables = defineSettlement({
  name: "receivables",
  singular: "receivable",
  title: "Receivable",
  description: "Money to receive (accounts receivable): due dates, installments, allocations of incoming financial transactions, cancelling.",
  notFoundCode: "RECEIVABLE_NOT_FOUND",
  table: "receivables",
  allocationsTable: "receivable_allocations",
  parentKey: "receivable_id",
  direction: "incoming",
  own: {
    customer_id: reference((): ResourceRef => customers),
    sales_order_id: reference((): ResourceRef => resourceNamed("sales-orders"), { description: "The sales order it comes from (of this tenant)" }),
    invoice_id: reference((): ResourceRef => resourceNamed("invoices"), { description: "The invoice it comes from (of this tenant)" }),
    pix_txid: stored("text", Schema.String, { nullable: true, filter: true, description: "The txid of its PIX charge (POST /receivables/{id}/pix): a statement line carrying it pays this receivable" }),
    our_number: stored("text", Schema.String, { nullable: true, filter: true, description: "Its boleto's our number (nosso número) as the bank prints it, by which the bank's return file names it" }),
    // The account's sequence value the our number was made from, so the boleto is the same when issued again.
    our_number_sequence: column({ type: "text", output: Schema.String, nullable: true, input: false, hidden: true })
  },
  actions: [pixAction, boletoAction],
  example: { amount: "890.00", due_date: "2024-02-15", issue_date: "2024-01-15", description: "Pedido 1001, parcela única" }
})

export type Receivable = RecordType<typeof receivables>
