/** Thrown when this machine cannot make the pair; the message says what is missing. */
export declare class PairUnavailable extends Error {}

export interface PostgresPair {
  readonly dir: string
  readonly primaryPort: number
  readonly standbyPort: number
  readonly primaryUrl: string
  readonly standbyUrl: string
  /** Stops applying the primary's WAL on the standby: it keeps receiving, and answers from what it had. */
  readonly pauseReplay: () => string
  readonly resumeReplay: () => string
  /** Stops the standby at once, as a crash would; `startStandby` brings it back. */
  readonly stopStandby: () => string
  readonly startStandby: () => string
  /** Runs one statement on the primary or the standby and answers its text. */
  readonly psql: (which: "primary" | "standby", statement: string) => string
  readonly stop: () => void
}

/** A PostgreSQL primary and a pg_basebackup streaming standby, each in a temporary folder on free ports. */
export declare const startPostgresPair: (options?: { readonly settings?: ReadonlyArray<string> }) => Promise<PostgresPair>
