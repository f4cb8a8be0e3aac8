import { renderSVG } from "uqr"

/** ISO/IEC 18004 asks for a quiet zone of four modules around the symbol so scanners find its edge. */
const QUIET_ZONE_MODULES = 4

/**
 * The BR Code as a QR code in SVG: error correction level M (about 15% of the symbol recoverable,
 * enough for a smudged or creased print while the modules stay large), one unit per module so the viewBox is the symbol's size and
 * the picture scales to whatever box the caller gives it. The markup is a rect and a path only: no
 * script, no text, no external reference; the caller adds `role="img"` and an accessible label.
 * Throws when the text exceeds a QR code's capacity, far beyond any BR Code `buildBrCode` makes.
 */
export const brCodeSvg = (brCode: string): string =>
  renderSVG(brCode, { ecc: "M", border: QUIET_ZONE_MODULES, pixelSize: 1 })
