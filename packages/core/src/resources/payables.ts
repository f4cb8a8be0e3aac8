import { Schema } from "effect"
import { column, type ResourceRef } from "../engine/field.js"
import type { RecordType } from "../engine/resource.js"
import { reference } from "./common.js"
import { defineSettlement } from "./settlements.js"
import { suppliers } from "./suppliers.js"

export const payables = defineSettlement({
  name: "payables",
  singular: "payable",
  title: "Payable",
  description: "Bills to pay (accounts payable): due dates, installments, allocations of outgoing financial transactions, cancelling.",
  notFoundCode: "PAYABLE_NOT_FOUND",
  table: "payables",
  allocationsTable: "payable_allocations",
  parentKey: "payable_id",
  direction: "outgoing",
  own: {
    supplier_id: reference((): ResourceRef => suppliers),
    purchase_invoice_id: column({
      type: "uuid",
      output: Schema.String,
      nullable: true,
      input: false,
      filter: true,
      description: "The purchase invoice whose payables plan made it (set through the invoice)"
    })
  },
  lockedBy: "purchase_invoice_id",
  example: { amount: "1250.00", due_date: "2024-02-10", issue_date: "2024-01-10", description: "Café em grãos, NF 1234" }
})

export type Payable = RecordType<typeof payables>
