/** The CLI's version: a module of its own, so that `erp --version` loads nothing else (bin/erp.js). */
export const VERSION = "0.1.0"
