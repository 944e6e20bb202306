/**
 * This process's database figures, for /metrics: plain counters, one set per
 * process (a process serves one database). PostgreSQL counts every read and
 * write it runs (db/postgres/client.ts); SQLite, whose statements run
 * synchronously, its write transactions and what they met.
 */
export const dbStats = {
  /** PostgreSQL: reads and writes started and not finished, each holding or waiting for a pooled connection */
  inFlight: 0,
  /** PostgreSQL: reads run (each a statement, or a few at most) */
  reads: 0,
  /** write transactions run */
  writes: 0,
  /** answered 503: the database could not be reached */
  unavailable: 0,
  /** answered 503: a statement or lock wait ran past its limit, or no answer came in time */
  timeouts: 0,
  /** PostgreSQL, answered 503: a write rolled back by a deadlock or serialization failure at each of its tries */
  conflicts: 0,
  /** SQLite: a write that found the database locked past busy_timeout */
  busy: 0,
  /** any other error from the database (not a constraint the code maps to a 409 or 422) */
  errors: 0,
}
