import { resolve } from 'node:path'
import { ConfigError } from '../config.ts'
import { MigrationError } from '../db/migration-error.ts'
import { connectProblem, isConflict } from '../db/postgres/client.ts'
import { DatabaseUnavailable } from '../db/types.ts'
import { isListenError, listenFailure } from './diagnose/network.ts'
import { isPostgresError, postgresFailure, privilegeHint, URL_OPTION } from './diagnose/postgres.ts'
import { databaseFailure, isSqliteError } from './diagnose/sqlite.ts'
import { CliError, EXIT_FAILURE, EXIT_USAGE, type ErrorLike, oneLine, reason, UsageError } from './errors.ts'

/**
 * Any failure as the one line of errors.ts and an exit status: what the
 * failure says of itself, or what diagnose/ finds out about it.
 */

/** What main knew when the failure happened: the names the message can use. */
export interface FailureContext {
  command?: string
  databasePath?: string
  /** the PostgreSQL URL, password already hidden */
  databaseUrl?: string
  /** what names the SQLite file and the PostgreSQL URL on this command line, when not --db and the variables (copy: --from, --to) */
  pathOption?: string
  urlOption?: string
  host?: string
  port?: number
}

export interface Explained {
  line: string
  exitCode: number
  /** nothing here knew this failure: its stack is worth a look */
  unexpected?: boolean
}

/** The one line (without the `conduit: ` prefix) and the exit status for any failure. */
export async function explain(error: unknown, context: FailureContext): Promise<Explained> {
  if (error instanceof CliError) return { line: oneLine(error.message), exitCode: error.exitCode }
  if (error instanceof ConfigError) return { line: oneLine(error.message), exitCode: EXIT_USAGE }
  if (context.databaseUrl) {
    const problem = connectProblem(error instanceof DatabaseUnavailable ? error.cause : error)
    if (problem) return { line: await postgresFailure(problem, context.databaseUrl, context.urlOption), exitCode: EXIT_FAILURE }
  }
  // SQLite on a full disk or an I/O error (a write of admin, seed...): what the file system shows, as for any SQLite failure
  if (
    error instanceof DatabaseUnavailable &&
    !context.databaseUrl &&
    context.databasePath !== undefined &&
    isSqliteError(error.cause as ErrorLike)
  ) {
    return { line: databaseFailure(error.cause as ErrorLike, context.databasePath, context.pathOption), exitCode: EXIT_FAILURE }
  }
  // reachable, but other writes kept deadlocking with this one (each try rolled back): nothing of it was written
  if (error instanceof DatabaseUnavailable && isConflict(error.cause)) {
    return {
      line: `the PostgreSQL database ${context.databaseUrl ?? ''} rolled this change back to end a conflict with other writes, three times (${(error.cause as Error).message}); nothing of that step was written: run the command again`,
      exitCode: EXIT_FAILURE,
    }
  }
  if (error instanceof DatabaseUnavailable) {
    const cause = reason((error.cause ?? error) as ErrorLike)
    return {
      line: `cannot reach the PostgreSQL database ${context.databaseUrl ?? ''} (${cause}); check that the server runs and accepts connections, and the host and port in ${context.urlOption ?? URL_OPTION}`,
      exitCode: EXIT_FAILURE,
    }
  }
  if (context.databaseUrl && isPostgresError(error)) {
    const grant = (error as { errno?: unknown }).errno === '42501' ? `; ${privilegeHint(context.databaseUrl)}` : ''
    return {
      line: `cannot use the PostgreSQL database ${context.databaseUrl}: ${reason(error as ErrorLike)}${grant}`,
      exitCode: EXIT_FAILURE,
    }
  }
  if (error instanceof MigrationError) {
    const where = context.databaseUrl
      ? `${context.databaseUrl}: `
      : context.databasePath === undefined
        ? ''
        : `${resolve(context.databasePath)}: `
    return { line: `${where}${oneLine(error.message)}`, exitCode: EXIT_USAGE }
  }
  const e = error as ErrorLike
  if (isListenError(e) && context.port !== undefined) {
    return { line: await listenFailure(e, context.host ?? '0.0.0.0', context.port), exitCode: EXIT_FAILURE }
  }
  if (isSqliteError(e) && context.databasePath !== undefined) {
    return { line: databaseFailure(e, context.databasePath, context.pathOption), exitCode: EXIT_FAILURE }
  }
  const what = context.command ? `${context.command} failed` : 'failed'
  return { line: `${what}: ${reason(e)}`, exitCode: EXIT_FAILURE, unexpected: true }
}

/** Prints the explanation of `error` (and with `debug` its stack) to stderr; returns the exit status. */
export async function report(error: unknown, context: FailureContext, debug: boolean): Promise<number> {
  const explained: Explained = await explain(error, context).catch(() => ({
    line: `failed: ${reason(error as ErrorLike)}`,
    exitCode: EXIT_FAILURE,
    unexpected: true,
  }))
  const usage = error instanceof UsageError || error instanceof ConfigError
  const hint = explained.unexpected && !debug ? ' (run with --debug for the stack)' : ''
  const stack = debug && !usage ? stackOf(error) : ''
  // a server whose log is JSON ends with a JSON line too: whatever reads its log reads that one
  if (context.command === 'serve' && jsonLog()) {
    console.error(
      JSON.stringify({
        time: new Date().toISOString(),
        level: 'error',
        msg: `${explained.line}${hint}`,
        ...(stack ? { error: stack } : {}),
      }),
    )
    return explained.exitCode
  }
  // (a string, never the error itself: Bun would print the minified source with it)
  console.error(`conduit: ${explained.line}${hint}`)
  if (stack) console.error(stack)
  return explained.exitCode
}

/** LOG_FORMAT=json, as config.ts reads it: a failure may come before the settings were read, or be one of them. */
const jsonLog = () => process.env.LOG_FORMAT?.trim().toLowerCase() === 'json'

/** The stack of an error and its causes, without the source excerpt Bun's inspector adds. */
function stackOf(error: unknown, depth = 0): string {
  const e = error as ErrorLike
  if (e === null || typeof e !== 'object' || depth > 3) return ''
  const fields = ['code', 'errno', 'syscall']
    .filter((k) => (e as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${k}=${(e as Record<string, unknown>)[k]}`)
    .join(' ')
  const own = `${e.stack ?? `${e.name}: ${e.message}`}${fields ? `\n  ${fields}` : ''}`
  const cause = e.cause === undefined ? '' : stackOf(e.cause, depth + 1)
  return cause ? `${own}\ncaused by: ${cause}` : own
}
