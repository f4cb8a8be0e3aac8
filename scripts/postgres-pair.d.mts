/** Thrown when this machine cannot make the pair; the message says what is missing. */
export declare class PairUnavailable extends Error {}

/** Whether this process runs as root, where PostgreSQL and PgBouncer must run as the `postgres` user. */
export declare const isRoot: () => boolean

/** A TCP port on 127.0.0.1 that nothing listens on now. */
export declare const freePort: () => Promise<number>

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
