import { Effect, Option, Schema } from "effect"
import { resourceNamed } from "../engine/registry.js"
import type { AnyResource, ResourceAction } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { formatDecimal } from "../money/decimal.js"
import { brCodeSvg, buildBrCode, newTxid } from "../payments/pix/index.js"
import { collectionOf } from "./account-collection.js"
import { openAmountOfRecord } from "./settlement.js"

export const PixCharge = Schema.Struct({
  receivable_id: Schema.String,
  financial_account_id: Schema.String,
  txid: Schema.String.annotate({ description: "Kept on the receivable (pix_txid): a statement line carrying it matches at score 1" }),
  amount: Schema.String.annotate({ description: "What is open on the receivable, in the BR Code with two decimals" }),
  br_code: Schema.String.annotate({ description: "The \"copia e cola\" text: EMV QR Code (BR Code) of a static PIX with amount, CRC16-CCITT checked" }),
  qr_code_svg: Schema.String.annotate({ description: "The BR Code as a QR code, an SVG document" })
}).annotate({ identifier: "PixCharge" })

const accounts = (): AnyResource => resourceNamed("financial-accounts")

export const pixAction: ResourceAction = {
  name: "pix",
  method: "POST",
  path: "pix",
  permission: "update",
  summary: "Charge a receivable by PIX",
  description: "Answers the BR Code (\"copia e cola\") of a static PIX charge for what is open on the receivable, to its financial account's PIX key " +
    "(br_data.pix_key, with pix_merchant_name and pix_merchant_city), and the QR code as SVG. The txid is made once and kept on the receivable " +
    "(pix_txid): asked again, the same txid with the amount open then. 422 for a paid or cancelled receivable, one without a financial account, " +
    "or an account without a PIX key.",
  output: PixCharge,
  run: (context) =>
    Effect.gen(function* () {
      const receivable = context.current
      const refuse = (field: string, reason: string, code: string) => Effect.fail(unprocessable(`No PIX charge can be made: ${field} ${reason}`, { [field]: [reason] }, code))
      if (receivable.status === "paid" || receivable.status === "cancelled") return yield* refuse("status", `is ${String(receivable.status)}`, "NOT_CHARGEABLE")
      if (typeof receivable.financial_account_id !== "string") return yield* refuse("financial_account_id", "is required: the account whose PIX key receives", "PIX_NOT_SET_UP")
      const account = yield* context.store.findById(accounts(), receivable.financial_account_id)
      if (Option.isNone(account)) return yield* refuse("financial_account_id", "does not match any financial account", "PIX_NOT_SET_UP")
      const pix = collectionOf(account.value.br_data)
      if (!pix.pix_key || !pix.pix_merchant_name || !pix.pix_merchant_city) {
        return yield* refuse("financial_account_id", "has no PIX key, merchant name and city (br_data.pix_key, pix_merchant_name, pix_merchant_city)", "PIX_NOT_SET_UP")
      }
      const open = openAmountOfRecord(receivable)
      const txid = typeof receivable.pix_txid === "string" ? receivable.pix_txid : newTxid()
      const built = buildBrCode({ key: pix.pix_key, merchantName: pix.pix_merchant_name, merchantCity: pix.pix_merchant_city, amount: formatDecimal(open), txid })
      if (!built.ok) {
        const field = built.field === "amount" ? "amount" : "financial_account_id"
        return yield* refuse(field, built.message, "PIX_NOT_SET_UP")
      }
      if (receivable.pix_txid !== txid) yield* context.store.update(context.resource, String(receivable.id), { pix_txid: txid })
      return {
        receivable_id: String(receivable.id),
        financial_account_id: receivable.financial_account_id,
        txid,
        amount: open.toFixed(2),
        br_code: built.brCode,
        qr_code_svg: brCodeSvg(built.brCode)
      }
    })
}
