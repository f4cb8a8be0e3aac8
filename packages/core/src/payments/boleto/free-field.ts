import { bancoDoBrasilFreeField } from "./banco-do-brasil.js"
import type { BankData, FreeField } from "./bank-data.js"
import { bradescoFreeField } from "./bradesco.js"
import { itauFreeField } from "./itau.js"
import { refuse, type BoletoResult } from "./result.js"
import { santanderFreeField } from "./santander.js"

/** The banks whose free field is built here, by their COMPE code. */
export const BOLETO_BANKS: ReadonlyMap<string, { readonly name: string; readonly freeField: (data: BankData) => BoletoResult<FreeField> }> = new Map([
  ["001", { name: "Banco do Brasil", freeField: bancoDoBrasilFreeField }],
  ["033", { name: "Santander", freeField: santanderFreeField }],
  ["237", { name: "Bradesco", freeField: bradescoFreeField }],
  ["341", { name: "Itaú", freeField: itauFreeField }]
])

/** The 25-digit free field ("campo livre") a bank defines, and the nosso número as it prints it. */
export const freeFieldFor = (bankCode: string, data: BankData): BoletoResult<FreeField> => {
  const bank = BOLETO_BANKS.get(bankCode)
  if (bank === undefined) {
    const known = [...BOLETO_BANKS].map(([code, { name }]) => `${code} (${name})`).join(", ")
    return refuse(`no boleto free-field layout for bank "${bankCode}"; the banks built here are ${known}`)
  }
  return bank.freeField(data)
}
