import { Effect, Option, Schema } from "effect"
import { resourceNamed } from "../engine/registry.js"
import type { AnyResource, ResourceAction } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { formatDecimal } from "../money/decimal.js"
import { barcodeSvg } from "../payments/boleto/barcode-svg.js"
import { boletoDigits, BOLETO_BANKS, freeFieldFor } from "../payments/boleto/index.js"
import { collectionOf } from "./account-collection.js"
import { openAmountOfRecord } from "./settlement.js"

export const Boleto = Schema.Struct({
  receivable_id: Schema.String,
  financial_account_id: Schema.String,
  bank_code: Schema.String,
  bank_name: Schema.String,
  our_number: Schema.String.annotate({ description: "As the bank prints it; kept on the receivable, by which the bank's return file names it" }),
  due_date: Schema.String,
  amount: Schema.String.annotate({ description: "What is open on the receivable, two decimals" }),
  barcode: Schema.String.annotate({ description: "The 44 digits the barcode encodes" }),
  digitable_line: Schema.String.annotate({ description: "The 47-digit linha digitável, digits only" }),
  formatted_line: Schema.String.annotate({ description: "The linha digitável as printed" }),
  payer_name: Schema.NullOr(Schema.String),
  beneficiary_name: Schema.String
}).annotate({ identifier: "Boleto" })
type Boleto = typeof Boleto.Type

const accounts = (): AnyResource => resourceNamed("financial-accounts")
const customers = (): AnyResource => resourceNamed("customers")

const escape = (text: string) => text.replace(/[&<>"']/gu, (char) => `&#${char.charCodeAt(0)};`)

/** The boleto as a page to print: the payment slip's fields, the line and the barcode. */
export const boletoPage = (boleto: Boleto): string => {
  const field = (label: string, value: string) => `<div class="f"><span>${escape(label)}</span><strong>${escape(value)}</strong></div>`
  return `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Boleto ${escape(boleto.our_number)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#000}main{max-width:46rem;margin:auto;border:1px solid #000;padding:1rem}
header{display:flex;gap:1rem;align-items:baseline;border-bottom:2px solid #000;padding-bottom:.5rem}header b{font-size:1.2rem}
.line{font:600 1.05rem ui-monospace,monospace;overflow-wrap:anywhere}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.5rem;margin:1rem 0}
.f span{display:block;font-size:.75rem;color:#333}svg{display:block;width:100%;max-width:40rem;height:4rem}@media print{body{margin:0}}</style></head>
<body><main><header><b>${escape(boleto.bank_name)} | ${escape(boleto.bank_code)}-9</b><span class="line">${escape(boleto.formatted_line)}</span></header>
<div class="grid">${field("Beneficiário", boleto.beneficiary_name)}${field("Pagador", boleto.payer_name ?? "")}${field("Vencimento", boleto.due_date.split("-").reverse().join("/"))}
${field("Valor do documento", `R$ ${boleto.amount.replace(".", ",")}`)}${field("Nosso número", boleto.our_number)}</div>
<figure role="img" aria-label="Código de barras ${escape(boleto.barcode)}">${barcodeSvg(boleto.barcode)}</figure></main></body></html>`
}

export const boletoAction: ResourceAction = {
  name: "boleto",
  method: "POST",
  path: "boleto",
  permission: "update",
  summary: "Issue a boleto for a receivable",
  description: "Computes, from the financial account's boleto agreement (br_data: boleto_bank_code, boleto_agreement, boleto_wallet, boleto_agency, " +
    "boleto_account, boleto_next_our_number), the 44-digit barcode (general check digit by modulo 11, the due-date factor restarted in February " +
    "2025, the amount open) and the 47-digit linha digitável, keeps the our number on the receivable (taken once from the account's sequence), " +
    "and answers them; with Accept: text/html, a page fit to print. 422 for a paid or cancelled receivable, one without an account, an " +
    "account without a boleto agreement or a bank whose layout is not built, or a due date or amount a boleto cannot carry.",
  output: Boleto,
  page: (output) => boletoPage(Schema.decodeUnknownSync(Boleto)(output)),
  run: (context) =>
    Effect.gen(function* () {
      const receivable = context.current
      const refuse = (field: string, reason: string, code: string) => Effect.fail(unprocessable(`No boleto can be issued: ${field} ${reason}`, { [field]: [reason] }, code))
      if (receivable.status === "paid" || receivable.status === "cancelled") return yield* refuse("status", `is ${String(receivable.status)}`, "NOT_CHARGEABLE")
      if (typeof receivable.financial_account_id !== "string") return yield* refuse("financial_account_id", "is required: the account the boleto is collected to", "BOLETO_NOT_SET_UP")
      const accountId = receivable.financial_account_id
      // Locked: two boletos at once never take the same our number.
      const account = yield* context.store.findById(accounts(), accountId, { forUpdate: true })
      if (Option.isNone(account)) return yield* refuse("financial_account_id", "does not match any financial account", "BOLETO_NOT_SET_UP")
      const collection = collectionOf(account.value.br_data)
      const bankCode = collection.boleto_bank_code
      const bank = bankCode ? BOLETO_BANKS.get(bankCode) : undefined
      if (!bankCode || !bank) return yield* refuse("financial_account_id", "has no boleto agreement (br_data.boleto_bank_code and the rest)", "BOLETO_NOT_SET_UP")
      // Issued again, a boleto keeps its our number; the first takes the account's next.
      const kept = typeof receivable.our_number_sequence === "string" ? receivable.our_number_sequence : undefined
      const sequence = kept ?? String(collection.boleto_next_our_number ?? 1)
      const free = freeFieldFor(bankCode, {
        agreement: collection.boleto_agreement ?? undefined,
        wallet: collection.boleto_wallet ?? undefined,
        agency: collection.boleto_agency ?? undefined,
        account: collection.boleto_account ?? undefined,
        ourNumber: sequence
      })
      if (!free.ok) return yield* refuse("financial_account_id", free.message, "BOLETO_NOT_SET_UP")
      const open = openAmountOfRecord(receivable)
      const digits = boletoDigits({ bankCode, currency: "9", dueDate: String(receivable.due_date), amount: formatDecimal(open), freeField: free.freeField })
      if (!digits.ok) return yield* refuse("due_date", digits.message, "NOT_CHARGEABLE")
      if (kept === undefined) {
        const stored = account.value.br_data
        yield* context.store.update(accounts(), accountId, { br_data: { ...(typeof stored === "object" && stored !== null ? stored : {}), boleto_next_our_number: Number(sequence) + 1 } })
        yield* context.store.update(context.resource, String(receivable.id), { our_number: free.ourNumber, our_number_sequence: sequence })
      }
      const payer = typeof receivable.customer_id === "string" ? yield* context.store.findById(customers(), receivable.customer_id) : Option.none()
      return {
        receivable_id: String(receivable.id),
        financial_account_id: accountId,
        bank_code: bankCode,
        bank_name: bank.name,
        our_number: free.ourNumber,
        due_date: String(receivable.due_date),
        amount: open.toFixed(2),
        barcode: digits.barcode,
        digitable_line: digits.digitableLine,
        formatted_line: digits.formattedLine,
        payer_name: Option.isSome(payer) ? String(payer.value.legal_name) : null,
        beneficiary_name: collection.pix_merchant_name ?? String(account.value.name)
      }
    })
}
