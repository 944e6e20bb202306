import { existsSync } from 'node:fs'
import type { Config } from '../config.ts'
import { openStore, openStoreToRead } from '../db/open.ts'
import type { Store } from '../db/store.ts'
import type { Awaitable } from '../db/types.ts'
import { HttpError } from '../errors.ts'
import { type Flags, type OptionName, untimed } from './command.ts'
import { noDatabase } from './diagnose/sqlite.ts'
import { CliError } from './errors.ts'

/**
 * What the `conduit admin ...` commands share. They open the database as the
 * service does and write through the same write policies (each feature's
 * writes.ts, with the ADMIN actor), so each write reaches the change log in
 * its own transaction, and every running instance and worker answers its
 * next request with the write applied, caches included.
 */

/** The `--db` part of every admin command's usage. */
export const DB_USAGE = '[--db FILE|URL]'
/** The options every admin command takes: `--json`, and the database's `--db`. */
export const ADMIN_OPTIONS: readonly OptionName[] = ['json', 'db']

/**
 * Runs `fn` on the configured database's store, closed after. A SQLite file
 * that does not exist is refused, not created: an operator's typo must not
 * leave an empty database behind and report "no such user". `reads`: `fn`
 * only reads, and a SQLite file at this binary's schema version is opened
 * read-only (one that must be migrated first is opened as for a write).
 */
export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>, reads = false): Promise<T> {
  if (!config.databaseUrl && !existsSync(config.databasePath)) throw noDatabase(config.databasePath)
  const reader = reads && !config.databaseUrl ? openStoreToRead(config.databasePath) : undefined
  const store = reader ?? (await openStore(untimed(config))).store
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

/** A read or write whose policy answers 404 for what does not exist: then the one line `missing`, exit status 1. */
export async function found<T>(work: () => Awaitable<T>, missing: string): Promise<T> {
  try {
    return await work()
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) throw new CliError(missing)
    throw e
  }
}

/** Prints what a command did (one line) or found: `text`, or with --json `json` as one line of JSON. */
export function said(flags: Flags, text: string, json: unknown): number {
  console.log(flags.json ? JSON.stringify(json) : text)
  return 0
}

/**
 * What a command changed, and where: an operator whose environment named another database than
 * meant (a shell that read the service's env file otherwise than systemd does) sees it at once.
 */
export function wrote(flags: Flags, store: Store, text: string, json: unknown): number {
  return said(flags, `${text} (in ${store.location})`, json)
}

/** `1 article`, `2 articles`. */
export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`
