import { BASE62, randomText } from "../auth/tokens.js"

/** Token prefixes of the spec: they say what a token is before any lookup. */
export const TOKEN_PREFIX = { code: "svcac_", access: "svc_", refresh: "svcrf_", session: "svcss_" } as const

/** A new opaque token of a kind (`TOKEN_PREFIX`): 43 random base-62 characters after its prefix. */
export const newToken = (prefix: string) => `${prefix}${randomText(43, BASE62)}`
