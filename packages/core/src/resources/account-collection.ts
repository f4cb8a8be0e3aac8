import { Effect, Option, Schema } from "effect"
import type { Draft } from "../engine/resource.js"
import { BOLETO_BANKS } from "../payments/boleto/index.js"
import { parsePixKey, PIX_KEY_TYPES } from "../payments/pix/index.js"
import { Problems, Text } from "./common.js"

/**
 * How a financial account collects in Brazil (its `br_data`): its PIX key with the holder's name
 * and city as the key's directory entry has them, and its boleto agreement with the bank.
 */
export const AccountCollection = Schema.Struct({
  pix_key: Schema.NullOr(Schema.String),
  pix_key_type: Schema.NullOr(Schema.Literals(PIX_KEY_TYPES)),
  pix_merchant_name: Schema.NullOr(Schema.String),
  pix_merchant_city: Schema.NullOr(Schema.String),
  boleto_bank_code: Schema.NullOr(Schema.String),
  boleto_agreement: Schema.NullOr(Schema.String),
  boleto_wallet: Schema.NullOr(Schema.String),
  boleto_agency: Schema.NullOr(Schema.String),
  boleto_account: Schema.NullOr(Schema.String),
  boleto_next_our_number: Schema.NullOr(Schema.Int)
})

const Digits = (max: number, description: string) =>
  Schema.optionalKey(Schema.NullOr(Text(max).check(Schema.isPattern(/^\d+$/u, { message: "must hold digits only" }))).annotate({ description }))

export const accountCollectionInput = Schema.Struct({
  pix_key: Schema.optionalKey(Schema.NullOr(Text(77)).annotate({ description: "The account's PIX key: a CPF, CNPJ, e-mail, phone (+55…) or random key" })),
  pix_key_type: Schema.optionalKey(Schema.NullOr(Schema.Literals(PIX_KEY_TYPES)).annotate({ description: "Read from the key when absent; send it to read the key as that type" })),
  pix_merchant_name: Schema.optionalKey(Schema.NullOr(Text(100)).annotate({ description: "The account holder's name in PIX charges (cut to 25 letters, accents removed)" })),
  pix_merchant_city: Schema.optionalKey(Schema.NullOr(Text(60)).annotate({ description: "The account holder's city in PIX charges (cut to 15 letters)" })),
  boleto_bank_code: Digits(3, `The bank whose boleto layout applies: ${[...BOLETO_BANKS].map(([code, bank]) => `${code} (${bank.name})`).join(", ")}`),
  boleto_agreement: Digits(20, "The collection agreement (convênio; código do beneficiário at Santander), without check digit"),
  boleto_wallet: Digits(3, "The wallet (carteira)"),
  boleto_agency: Digits(5, "The branch (agência), without check digit"),
  boleto_account: Digits(12, "The account number (conta), without check digit"),
  boleto_next_our_number: Schema.optionalKey(Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 99_999_999_999 }, { message: "must be a whole number from 1" }))).annotate({
    description: "The next our number (nosso número) a boleto takes; each boleto moves it on by one"
  }))
}).annotate({ identifier: "FinancialAccountBrDataInput", description: "How the account collects in Brazil: its PIX key, its boleto agreement" })

/** What a stored or drafted `br_data` holds of collection, whatever else it holds. */
const CollectionFields = Schema.Struct({
  pix_key: Schema.optionalKey(AccountCollection.fields.pix_key),
  pix_key_type: Schema.optionalKey(AccountCollection.fields.pix_key_type),
  pix_merchant_name: Schema.optionalKey(AccountCollection.fields.pix_merchant_name),
  pix_merchant_city: Schema.optionalKey(AccountCollection.fields.pix_merchant_city),
  boleto_bank_code: Schema.optionalKey(AccountCollection.fields.boleto_bank_code),
  boleto_agreement: Schema.optionalKey(AccountCollection.fields.boleto_agreement),
  boleto_wallet: Schema.optionalKey(AccountCollection.fields.boleto_wallet),
  boleto_agency: Schema.optionalKey(AccountCollection.fields.boleto_agency),
  boleto_account: Schema.optionalKey(AccountCollection.fields.boleto_account),
  boleto_next_our_number: Schema.optionalKey(AccountCollection.fields.boleto_next_our_number)
})
const readCollection = Schema.decodeUnknownOption(CollectionFields)
export const collectionOf = (block: unknown): typeof CollectionFields.Type => Option.getOrElse(readCollection(block), () => ({}))

/**
 * A PIX key is kept as its directory writes it (digits, lower case, +55…), with its type; a key
 * that is none is 422 on it. A boleto bank must be one whose layout is built.
 */
export const accountCollectionRules = (draft: Draft) =>
  Effect.gen(function* () {
    const block = draft.values.br_data
    const collection = collectionOf(block)
    const problems = new Problems()
    const rest = typeof block === "object" && block !== null ? block : {}
    let next: Record<string, unknown> = { ...rest }
    if (typeof collection.pix_key === "string") {
      const parsed = parsePixKey(collection.pix_key, collection.pix_key_type ?? undefined)
      if (parsed.ok) next = { ...next, pix_key: parsed.key.value, pix_key_type: parsed.key.type }
      else problems.add("br_data.pix_key", parsed.message)
    }
    if (typeof collection.boleto_bank_code === "string" && !BOLETO_BANKS.has(collection.boleto_bank_code)) {
      problems.add("br_data.boleto_bank_code", `has no boleto layout here; the banks built are ${[...BOLETO_BANKS.keys()].join(", ")}`)
    }
    if (problems.any) return yield* problems.fail("The account's collection data is not valid")
    return { ...draft, values: { ...draft.values, br_data: next } }
  })
