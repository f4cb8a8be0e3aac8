import * as crypto from "node:crypto"

type Encoding = "base64" | "base64url" | "hex"

/** Node's one-shot `crypto.hash` (20.12 and later): cheaper than a `Hash` object for the short texts of a request. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: Encoding) => string }).hash

/** SHA-256 of a UTF-8 text, encoded; the same digest on every Node version this package supports. */
export const sha256 = (text: string, encoding: Encoding): string =>
  oneShot ? oneShot("sha256", text, encoding) : crypto.createHash("sha256").update(text, "utf8").digest(encoding)
