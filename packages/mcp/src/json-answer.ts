/**
 * A tool's answer that is JSON text already (a list page whose records the store built as text):
 * the text content is sent as it is, and parsed once for `structuredContent`, rather than each
 * record decoded and encoded again.
 */
export class JsonAnswer {
  constructor(readonly text: string) {}
}
