/**
 * A bank statement with a known answer, made from a seed: open receivables of many customers and
 * the lines that pay them as banks write them (exact payments on time and late, partial ones, one
 * line for several installments, equal amounts of different customers, fees and noise), the payer
 * named in full, cut short, by tax id or both. Plain
 * data, no imports: the accuracy test and `bench/reconciliation.mjs` (Node strips the types) use it.
 */

export interface GeneratedParty {
  readonly id: string
  readonly name: string
  readonly taxId: string
}

export interface GeneratedDocument {
  readonly id: string
  readonly partyId: string
  /** Two decimals, as a client sends it. */
  readonly amount: string
  readonly dueDate: string
}

export interface GeneratedLine {
  readonly id: string
  readonly amount: string
  readonly postedAt: string
  readonly name: string
  readonly memo: string | null
  readonly kind: "exact" | "late" | "partial" | "installments" | "twin" | "fee" | "noise"
  /** What the line truly pays: none for fees and noise. */
  readonly pays: ReadonlyArray<{ readonly documentId: string; readonly amount: string }>
}

export interface GeneratedStatement {
  readonly parties: ReadonlyArray<GeneratedParty>
  readonly documents: ReadonlyArray<GeneratedDocument>
  readonly lines: ReadonlyArray<GeneratedLine>
}

const FIRST = ["Maria", "José", "Ana", "João", "Antônio", "Francisca", "Carlos", "Paulo", "Lucas", "Juliana", "Márcia", "Rafael", "Beatriz", "Gustavo", "Patrícia"]
const LAST = ["Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira", "Lima", "Gomes", "Costa", "Ribeiro", "Martins", "Carvalho", "Almeida"]
const TRADES = ["Padaria", "Mercado", "Oficina", "Farmácia", "Papelaria", "Açougue", "Restaurante", "Transportes", "Construtora", "Distribuidora", "Torrefação", "Ótica"]
const PLACES = ["Serra Azul", "Bela Vista", "São Jorge", "Boa Esperança", "Três Rios", "Vale Verde", "Santa Clara", "Horizonte", "Primavera", "Ipê Amarelo"]
const SUFFIXES = ["Ltda", "ME", "EIRELI", "S/A", ""]

/** A small seeded generator (mulberry32): the same seed gives the same statement. */
const random = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const plain = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toUpperCase()
const day = (base: string, days: number) => new Date(Date.parse(`${base}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
const cents = (value: number) => (value / 100).toFixed(2)
const uuid = (next: () => number) =>
  "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx".replace(/x/g, () => Math.floor(next() * 16).toString(16))
/** The two check digits of a CPF (11 digits) or CNPJ (14), by the tax authority's modulo 11. */
const withCheckDigits = (base: string): string => {
  const digit = (body: string) => {
    const weights = body.length < 12 ? Array.from({ length: body.length }, (_, i) => body.length + 1 - i) : Array.from({ length: body.length }, (_, i) => ((body.length - 1 - i) % 8) + 2)
    const sum = [...body].reduce((total, char, i) => total + Number(char) * weights[i], 0)
    const rest = sum % 11
    return rest < 2 ? "0" : String(11 - rest)
  }
  const first = base + digit(base)
  return first + digit(first)
}
const formatCnpj = (digits: string) => `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5, 8)}/${digits.slice(8, 12)}-${digits.slice(12)}`
const formatCpf = (digits: string) => `${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)}-${digits.slice(9)}`

export const generateStatement = (options: { readonly seed: number; readonly documents: number; readonly lines: number; readonly today: string }): GeneratedStatement => {
  const next = random(options.seed)
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(next() * list.length)]
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const digits = (count: number) => Array.from({ length: count }, () => String(int(0, 9))).join("")

  const names = new Set<string>()
  const parties: Array<GeneratedParty> = []
  while (parties.length < Math.max(20, Math.floor(options.documents / 3))) {
    const company = next() < 0.6
    const name = company ? `${pick(TRADES)} ${pick(PLACES)} ${pick(SUFFIXES)}`.trim() : `${pick(FIRST)} ${pick(LAST)} ${pick(LAST)}`
    if (names.has(plain(name).replace(/ (LTDA|ME|EIRELI|S\/A)$/u, ""))) continue
    names.add(plain(name).replace(/ (LTDA|ME|EIRELI|S\/A)$/u, ""))
    parties.push({ id: uuid(next), name, taxId: withCheckDigits(company ? `${digits(8)}0001` : digits(9)) })
  }

  const documents: Array<GeneratedDocument> = []
  const lines: Array<GeneratedLine> = []
  const document = (partyId: string, amount: number, dueDate: string) => {
    const made = { id: uuid(next), partyId, amount: cents(amount), dueDate }
    documents.push(made)
    return made
  }
  /** How banks write the payer: its name in capitals without accents (sometimes cut), or its tax id formatted. */
  const payer = (party: GeneratedParty): { name: string; memo: string | null } => {
    const name = plain(party.name)
    const taxId = party.taxId.length === 14 ? formatCnpj(party.taxId) : formatCpf(party.taxId)
    const style = next()
    if (style < 0.3) return { name: `${pick(["PIX RECEBIDO", "TED RECEBIDA", "DOC CREDITO", "TRANSF RECEBIDA"])} ${name}`, memo: null }
    // A bank that keeps 18 letters of the payer's name, cutting its last word.
    if (style < 0.45) return { name: `${pick(["PIX RECEBIDO", "TED RECEBIDA"])} ${name.slice(0, 18).trim()}`, memo: null }
    if (style < 0.75) return { name: `PIX ${name}`, memo: `${party.taxId.length === 14 ? "CNPJ" : "CPF"} ${taxId}` }
    if (style < 0.9) return { name: `CRED PIX ${taxId}`, memo: name }
    return { name: `${pick(["RECEBIMENTO", "CREDITO"])} ${party.taxId}`, memo: null }
  }
  const line = (kind: GeneratedLine["kind"], amount: string, postedAt: string, text: { name: string; memo: string | null }, pays: GeneratedLine["pays"]) =>
    lines.push({ id: uuid(next), amount, postedAt, name: text.name, memo: text.memo, kind, pays })

  const target = options.lines
  const share = (part: number) => Math.floor(target * part)
  const due = () => day(options.today, int(-60, 0))
  for (let i = 0; i < share(0.5); i++) {
    const party = pick(parties)
    const made = document(party.id, int(5_000, 900_000), due())
    const late = next() < 0.2
    line(late ? "late" : "exact", made.amount, day(made.dueDate, late ? int(6, 25) : int(-2, 3)), payer(party), [{ documentId: made.id, amount: made.amount }])
  }
  for (let i = 0; i < share(0.1); i++) {
    const party = pick(parties)
    const total = int(20_000, 900_000)
    const made = document(party.id, total, due())
    const paid = cents(Math.floor(total * (0.2 + next() * 0.6)))
    line("partial", paid, day(made.dueDate, int(-2, 3)), payer(party), [{ documentId: made.id, amount: paid }])
  }
  for (let i = 0; i < share(0.08); i++) {
    const party = pick(parties)
    const each = int(10_000, 300_000)
    const count = int(2, 3)
    const first = day(options.today, int(-90, -60))
    const group = Array.from({ length: count }, (_, n) => document(party.id, each, day(first, 30 * n)))
    line("installments", cents(each * count), day(group[count - 1].dueDate, int(0, 3)), payer(party), group.map((made) => ({ documentId: made.id, amount: made.amount })))
  }
  for (let i = 0; i < share(0.1) / 2; i++) {
    const [a, b] = [pick(parties), pick(parties)]
    if (a.id === b.id) continue
    const amount = int(5_000, 200_000)
    const dueDate = due()
    const first = document(a.id, amount, dueDate)
    const second = document(b.id, amount, dueDate)
    line("twin", first.amount, day(dueDate, int(0, 2)), payer(a), [{ documentId: first.id, amount: first.amount }])
    line("twin", second.amount, day(dueDate, int(0, 2)), payer(b), [{ documentId: second.id, amount: second.amount }])
  }
  while (lines.length < target) {
    const fee = next() < 0.5
    const text = fee
      ? { name: pick(["TARIFA PACOTE SERVICOS", "TARIFA PIX", "IOF", "TAXA MANUTENCAO CONTA", "TARIFA BOLETO"]), memo: null }
      : { name: pick(["DEPOSITO EM DINHEIRO", "RESGATE APLICACAO", "ESTORNO", "RENDIMENTO POUPANCA", "TRANSF ENTRE CONTAS"]), memo: null }
    line(fee ? "fee" : "noise", fee ? `-${cents(int(100, 9_000))}` : cents(int(1_000, 500_000)), day(options.today, int(-60, 0)), text, [])
  }
  // Documents nobody paid yet, up to the number asked for.
  while (documents.length < options.documents) document(pick(parties).id, int(5_000, 900_000), day(options.today, int(-30, 60)))
  return { parties, documents, lines }
}
