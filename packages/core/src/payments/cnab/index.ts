export { CNAB400_LAYOUTS, type Cnab400Layout } from "./cnab400-layouts.js"
export { readCnabReturn } from "./read-return.js"
export { MAX_LINES as CNAB_MAX_LINES } from "./text.js"
export type { CnabEntry, CnabReadResult, CnabReturn, CnabUnreadable } from "./types.js"
