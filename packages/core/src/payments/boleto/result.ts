/** What a boleto function answers: its value, or why the input cannot make a valid boleto. */
export type BoletoResult<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly message: string }

export const refuse = (message: string): { readonly ok: false; readonly message: string } => ({ ok: false, message })
