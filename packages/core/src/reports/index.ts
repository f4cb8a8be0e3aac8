import { receivablesAging, payablesAging } from "./aging.js"
import { cashFlow } from "./cash-flow.js"
import { incomeStatement } from "./income-statement.js"
import type { AnyReport } from "./report.js"
import { sales } from "./sales.js"

/** Every report, in the order the docs, the panel and MCP list them. */
export const allReports: ReadonlyArray<AnyReport> = [receivablesAging, payablesAging, cashFlow, incomeStatement, sales]

export const reportNamed = (name: string): AnyReport | undefined => allReports.find((report) => report.name === name)
