/**
 * Where the banks' CNAB 400 returns of "cobrança" differ. Every layout shares the
 * positions the Bradesco, Itaú and Banco do Brasil manuals give alike: occurrence 109–110,
 * occurrence date 111–116 (DDMMYY), title amount 153–165, discount 241–253, paid amount
 * 254–266 (Itaú's "valor principal") and interest 267–279 (juros de mora), each amount in
 * cents without a decimal point, and the record's sequence number at 395–400.
 */
export interface Cnab400Layout {
  readonly bank: string
  /** The record type (position 1) of the details that carry titles. */
  readonly detailType: string
  readonly ourNumber: readonly [number, number]
  readonly fees: readonly [number, number]
  readonly creditDate: readonly [number, number]
  /** The occurrence codes that report the title paid. */
  readonly settled: ReadonlySet<string>
}

export const CNAB400_LAYOUTS: ReadonlyMap<string, Cnab400Layout> = new Map<string, Cnab400Layout>([
  // Banco do Brasil CBR643, convênio of 7 digits: details of type 7, nosso número of 17 digits
  // at 64–80, credit date 176–181 and the fee ("valor da tarifa") at 182–188. Settled: 05 liquidado
  // sem registro, 06 liquidação normal, 08 liquidação por saldo, 15 liquidação em cartório
  // (07 liquidação por conta is a partial payment: the title stays open).
  ["001", {
    bank: "Banco do Brasil", detailType: "7", ourNumber: [64, 80], fees: [182, 188], creditDate: [176, 181],
    settled: new Set(["05", "06", "08", "15"])
  }],
  // Bradesco "Cobrança Bradesco — arquivo retorno": nosso número with its check digit at 71–82,
  // despesas de cobrança 176–188, credit date 296–301. Settled: 06 liquidação normal,
  // 15 liquidação em cartório, 17 liquidação após baixa ou título não registrado
  // (16 pago em cheque waits for the cheque to clear).
  ["237", {
    bank: "Bradesco", detailType: "1", ourNumber: [71, 82], fees: [176, 188], creditDate: [296, 301],
    settled: new Set(["06", "15", "17"])
  }],
  // Itaú "Cobrança 400 bytes — arquivo retorno": nosso número (8) and its DAC at 86–94, tarifa de
  // cobrança 176–188, credit date 296–301. Settled: 06 liquidação normal, 08 liquidação em cartório,
  // 59 baixa por crédito em conta via SISPAG (07 liquidação parcial leaves the title open; 10 is the
  // write-off that follows a liquidation already reported; 17 is "alteração de dados rejeitada").
  ["341", {
    bank: "Itaú", detailType: "1", ourNumber: [86, 94], fees: [176, 188], creditDate: [296, 301],
    settled: new Set(["06", "08", "59"])
  }]
])
