import type { GetPromptResult, Prompt } from "@modelcontextprotocol/sdk/types.js"

/**
 * Prompts for jobs agents are asked to do most: each one tells the agent which tools to
 * call in which order, so a user can start them from the client's prompt menu.
 */
interface PromptDefinition extends Prompt {
  /** The tools its steps cannot do without: it is offered only where they are served (toolsets). */
  readonly uses: ReadonlyArray<string>
  readonly text: (args: Readonly<Record<string, string>>) => string
}

const tenantArgument = { name: "tenant_id", description: "UUID of the tenant (list_tenants names yours)", required: true }

const definitions: ReadonlyArray<PromptDefinition> = [
  {
    name: "reconcile_payables",
    title: "Reconcile payables against a bank statement",
    description: "Matches a financial account's unallocated transactions to open payables and allocates the sure matches.",
    uses: ["list_financial_transactions", "list_payables", "allocate_payable"],
    arguments: [
      tenantArgument,
      { name: "financial_account_id", description: "UUID of the bank account whose statement to reconcile", required: true },
      { name: "since", description: "First transaction date to consider (YYYY-MM-DD); default 30 days ago", required: false }
    ],
    text: (args) => [
      `Reconcile payables of tenant ${args.tenant_id} against financial account ${args.financial_account_id}.`,
      "1. If the statement is not imported yet and the user gives an OFX file, call import_ofx_financial_account with it.",
      `2. Call list_financial_transactions with tenant_id, filters financial_account_id = ${args.financial_account_id}` +
        `${args.since ? `, posted_at >= ${args.since}` : ", posted_at in the last 30 days"} and amount < 0 (money out); follow ` +
        "pagination.next_cursor to the end. Leave out transactions with ignored_at set.",
      "3. Call list_payables with status in [pending, overdue, partial], sorted by due_date, following every page.",
      "4. Match a transaction to a payable when the amounts are equal and the dates are within 5 days, or the description names " +
        "the supplier or the document number. Never guess between two candidates: list them for the user instead.",
      "5. For each sure match call allocate_payable with the payable id, the transaction id and the amount (a positive decimal string). Stop at the first refusal " +
        "and relay its message.",
      "6. Answer with a table: allocated (payable, transaction, amount), ambiguous, and unmatched transactions and payables."
    ].join("\n")
  },
  {
    name: "summarise_overdue_receivables",
    title: "Summarise overdue receivables",
    description: "Who owes what and for how long: overdue receivables grouped by customer with ageing buckets.",
    uses: ["list_receivables"],
    arguments: [tenantArgument, { name: "customer_id", description: "Only this customer (UUID)", required: false }],
    text: (args) => [
      `Summarise overdue receivables of tenant ${args.tenant_id}${args.customer_id ? ` for customer ${args.customer_id}` : ""}.`,
      `1. Call list_receivables with tenant_id, filters status = overdue${args.customer_id ? ` and customer_id = ${args.customer_id}` : ""}, ` +
        "sort due_date:asc, limit 100, and follow pagination.next_cursor until has_next_page is false.",
      "2. Amounts are decimal strings: add them exactly (as decimals, not floats). A partial receivable also appears with status partial: include it when the user asks for everything unpaid.",
      "3. Group by customer: total open, count, oldest due date, and buckets 1-30, 31-60, 61-90 and over 90 days past due.",
      "4. Answer with one table sorted by total open (largest first) and a line with the grand total; name the customers with " +
        "get_customer when the list gives only their ids."
    ].join("\n")
  }
]

const served = (definition: PromptDefinition, tools: ReadonlySet<string> | undefined) =>
  tools === undefined || definition.uses.every((tool) => tools.has(tool))

/** The prompts whose tools are among these (every prompt without a set). */
export const promptsFor = (tools?: ReadonlySet<string>): ReadonlyArray<Prompt> =>
  definitions.filter((definition) => served(definition, tools)).map(({ text: _text, uses: _uses, ...prompt }) => prompt)

export const prompts: ReadonlyArray<Prompt> = promptsFor()

/**
 * The prompt's messages, or undefined for an unknown name (or one whose tools are not among
 * `tools`); a missing required argument throws (the SDK answers it as an error).
 */
export const getPrompt = (name: string, args: Readonly<Record<string, string>>, tools?: ReadonlySet<string>): GetPromptResult | undefined => {
  const definition = definitions.find((candidate) => candidate.name === name && served(candidate, tools))
  if (!definition) return undefined
  const missing = (definition.arguments ?? []).filter((argument) => argument.required && !args[argument.name]).map((argument) => argument.name)
  if (missing.length > 0) throw new Error(`Missing arguments: ${missing.join(", ")}`)
  return {
    description: definition.description,
    messages: [{ role: "user", content: { type: "text", text: definition.text(args) } }]
  }
}
