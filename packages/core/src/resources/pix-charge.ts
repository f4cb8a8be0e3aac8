import { Effect, Option, Schema } from "effect"
import { resourceNamed } from "../engine/registry.js"
import type { AnyResource, Draft, ResourceAction } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import { brCodeSvg, buildBrCode, newTxid, parsePixKey, PIX_KEY_TYPES } from "../payments/pix/index.js"
import { Problems, Text } from "./common.js"

/** An account's PIX key and the holder's name and city as the key's directory entry has them. */
export const AccountPix = Schema.Struct({
  pix_key: Schema.NullOr(Schema.String),
  pix_key_type: Schema.NullOr(Schema.Literals(PIX_KEY_TYPES)),
  pix_merchant_name: Schema.NullOr(Schema.String),
  pix_merchant_city: Schema.NullOr(Schema.String)
})

export const accountPixInput = {
  pix_key: Schema.optionalKey(Schema.NullOr(Text(77)).annotate({ description: "The account's PIX key: a CPF, CNPJ, e-mail, phone (+55…) or random key" })),
  pix_key_type: Schema.optionalKey(Schema.NullOr(Schema.Literals(PIX_KEY_TYPES)).annotate({ description: "Read from the key when absent; send it to read the key as that type" })),
  pix_merchant_name: Schema.optionalKey(Schema.NullOr(Text(100)).annotate({ description: "The account holder's name in PIX charges (cut to 25 letters, accents removed)" })),
  pix_merchant_city: Schema.optionalKey(Schema.NullOr(Text(60)).annotate({ description: "The account holder's city in PIX charges (cut to 15 letters)" }))
}

/** The PIX keys of a stored or drafted `br_data`, whatever else it holds. */
const PixFields = Schema.Struct({
  pix_key: Schema.optionalKey(Schema.NullOr(Schema.String)),
  pix_key_type: Schema.optionalKey(Schema.NullOr(Schema.Literals(PIX_KEY_TYPES))),
  pix_merchant_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  pix_merchant_city: Schema.optionalKey(Schema.NullOr(Schema.String))
})
const readPix = Schema.decodeUnknownOption(PixFields)
const pixOf = (block: unknown): typeof PixFields.Type => Option.getOrElse(readPix(block), () => ({}))

/** A PIX key is kept as its directory writes it (digits, lower case, +55…), with its type; a key that is none is 422 on it. */
export const accountPixRules = (draft: Draft) =>
  Effect.gen(function* () {
    const block = draft.values.br_data
    const pix = pixOf(block)
    if (typeof pix.pix_key !== "string") return draft
    const parsed = parsePixKey(pix.pix_key, pix.pix_key_type ?? undefined)
    if (!parsed.ok) {
      const problems = new Problems()
      problems.add("br_data.pix_key", parsed.message)
      return yield* problems.fail("The PIX key is not valid")
    }
    const rest = typeof block === "object" && block !== null ? block : {}
    return { ...draft, values: { ...draft.values, br_data: { ...rest, pix_key: parsed.key.value, pix_key_type: parsed.key.type } } }
  })

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
      const pix = pixOf(account.value.br_data)
      if (!pix.pix_key || !pix.pix_merchant_name || !pix.pix_merchant_city) {
        return yield* refuse("financial_account_id", "has no PIX key, merchant name and city (br_data.pix_key, pix_merchant_name, pix_merchant_city)", "PIX_NOT_SET_UP")
      }
      const open = decimal(String(receivable.amount)).minus(String(receivable.discount_amount)).plus(String(receivable.surcharge_amount)).minus(String(receivable.allocated_total))
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
