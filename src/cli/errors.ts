/**
 * How the command line fails: every failure, expected or not, ends as ONE
 * line on stderr, `conduit: <what failed>: <why>; <how to fix it>`, naming the
 * path, port or address involved. Exit status 2 for a usage or configuration
 * error, 1 for anything that went wrong while running. Each kind of mistake
 * (a missing directory, a database that cannot be reached...) has one
 * wording whatever the command (docs/DEPLOYING.md lists them; test/e2e/
 * mistakes.test.ts runs every command with each). With --debug (or
 * LOG_LEVEL=debug) the stack of the underlying error follows that line.
 *
 * Never `console.error(error)`: in the compiled binary Bun prints the
 * offending line of the minified bundle with it, kilobytes of source code.
 */
import { lookup } from 'node:dns/promises'
import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname, resolve } from 'node:path'
import { ConfigError } from '../config.ts'
import { MigrationError } from '../db/migration-error.ts'
import { type ConnectProblem, connectProblem } from '../db/postgres/client.ts'
import { DatabaseUnavailable } from '../db/types.ts'

export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

/** A failure already explained in one line. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** A bad command line, or a command refusing its arguments: exit status 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE)
  }
}

const HELP_HINT = 'see conduit --help'

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
  if (error instanceof DatabaseUnavailable) {
    const cause = reason((error.cause ?? error) as ErrorLike)
    return {
      line: `cannot reach the PostgreSQL database ${context.databaseUrl ?? ''} (${cause}); check that the server runs and accepts connections, and the host and port in ${context.urlOption ?? URL_OPTION}`,
      exitCode: EXIT_FAILURE,
    }
  }
  if (context.databaseUrl && isPostgresError(error)) {
    return { line: `cannot use the PostgreSQL database ${context.databaseUrl}: ${reason(error as ErrorLike)}`, exitCode: EXIT_FAILURE }
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
  // (a string, never the error itself: Bun would print the minified source with it)
  console.error(`conduit: ${explained.line}${hint}`)
  const stack = debug && !usage ? stackOf(error) : ''
  if (stack) console.error(stack)
  return explained.exitCode
}

// ------------------------------------------------------------- command line

const PARSE_ARGS_CODES = new Set([
  'ERR_PARSE_ARGS_UNKNOWN_OPTION',
  'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
  'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
])

/**
 * node:util parseArgs's messages span lines and talk about its own syntax
 * ("To specify a positional argument starting with a '-' ..."); this is the
 * one line a user needs.
 */
export function usageFromParseArgs(error: unknown): UsageError {
  const e = error as ErrorLike
  if (!PARSE_ARGS_CODES.has(String(e?.code))) return new UsageError(`${oneLine(reason(e))}; ${HELP_HINT}`)
  const message = String(e.message)
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? ''
  // "Option '-h, --help' does not take ..." and "Option '--port <value>' ..." name the flag among other words
  const flag = quoted.split(/[\s,]+/).find((w) => w.startsWith('--')) ?? (quoted.startsWith('-') ? quoted : `-${quoted}`)
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${flag}; ${HELP_HINT}`)
  if (/does not take an argument/.test(message)) return new UsageError(`option ${flag} takes no value; ${HELP_HINT}`)
  if (/ambiguous/.test(message)) {
    return new UsageError(`option ${flag} needs a value (write ${flag}=VALUE for a value that starts with "-"); ${HELP_HINT}`)
  }
  if (/missing/.test(message)) return new UsageError(`option ${flag} needs a value; ${HELP_HINT}`)
  return new UsageError(`${oneLine(message)}; ${HELP_HINT}`)
}

/**
 * parseArgs takes the `-5` of `--articles -5` for a flag and refuses it as
 * "ambiguous"; for the numeric options a negative number is joined to its
 * option (`--articles=-5`), so the range check can say what is wrong with it.
 */
export function joinNegativeNumbers(argv: readonly string[], numeric: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const next = argv[i + 1]
    if (arg === '--') {
      out.push(...argv.slice(i))
      break
    }
    if (numeric.includes(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else {
      out.push(arg)
    }
  }
  return out
}

// ------------------------------------------------------------------ listen

interface ErrorLike {
  name?: string
  message?: string
  code?: string
  errno?: number
  syscall?: string
  stack?: string
  cause?: unknown
}

/** Bun.serve's bind failures carry `syscall: "listen"` and the errno's code. */
const isListenError = (e: ErrorLike) => e?.syscall === 'listen'

const HOST_HINT = 'use an address of this machine with --host or HOST (0.0.0.0 for all of them)'

async function listenFailure(e: ErrorLike, host: string, port: number): Promise<string> {
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`
  // Bun reports a host name that does not resolve as EADDRINUSE ("Is port N in
  // use?"): a name is looked up (briefly) before the port gets the blame.
  const named = isIP(host) === 0 ? await resolves(host) : true
  if (named === false) return `${where}: the host name ${host} does not resolve; ${HOST_HINT}`
  switch (e.code) {
    case 'EADDRINUSE':
      return named === true
        ? `${where}: the port is already in use; stop the other server or choose another port with --port or PORT`
        : `${where}: the port is in use or the host name ${host} does not resolve; check --host/HOST and --port/PORT`
    case 'EADDRNOTAVAIL':
      return `${where}: ${host} is not an address of this machine; ${HOST_HINT}`
    case 'EACCES':
    case 'EPERM':
      return `${where}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); choose a port from 1024 up with --port or PORT`
    case 'EAFNOSUPPORT':
      return `${where}: this machine does not support that address family; ${HOST_HINT}`
    default:
      return `${where}: ${reason(e)}; check --host/HOST and --port/PORT`
  }
}

/** Whether a host name resolves; 'unknown' when the resolver does not answer within 2 s. */
async function resolves(host: string): Promise<boolean | 'unknown'> {
  const timeout = new Promise<'unknown'>((done) => setTimeout(done, 2_000, 'unknown').unref())
  return Promise.race([
    lookup(host).then(
      () => true,
      () => false,
    ),
    timeout,
  ])
}

// ---------------------------------------------------------------- database

const isSqliteError = (e: ErrorLike) => e?.name === 'SQLiteError' || (typeof e?.code === 'string' && e.code.startsWith('SQLITE_'))

/** What names the SQLite file, unless a command says otherwise (FailureContext.pathOption). */
const PATH_OPTION = '--db or DATABASE_PATH'

/**
 * A database that is not where it is named: the line for a missing directory
 * or file, the same from every command (serve creates a missing file; the
 * commands that only read or change one, admin, backup and copy, refuse it).
 */
function cannotOpen(file: string, problem: string, option: string): string {
  return `cannot open the database ${file}: ${problem}; ${problem.startsWith('directory') && problem.endsWith('does not exist') ? 'create it or ' : ''}choose another file with ${option}`
}

/** A SQLite file a command uses but never creates, missing (exit status 1, as for serve's missing directory). */
export function noDatabase(path: string, option = PATH_OPTION): CliError {
  const file = resolve(path)
  return new CliError(cannotOpen(file, fileProblem(file) ?? 'the file does not exist', option))
}

/** A failure of SQLite on the database file at `path`, explained from what the file system shows; `option` names the file on the command line. */
export function databaseFailure(e: ErrorLike, path: string, option = PATH_OPTION): string {
  const file = resolve(path)
  const dir = dirname(file)
  const code = String(e.code ?? '')
  const sqlite = oneLine(String(e.message ?? code))
  const hint = `choose another file with ${option}`
  if (code.startsWith('SQLITE_CANTOPEN')) {
    const problem = fileProblem(file)
    if (problem) return cannotOpen(file, problem, option)
    if (!existsSync(file)) {
      return `cannot create the database ${file}: directory ${dir} is not writable; choose a file in a writable directory with ${option}`
    }
    return readOnly(`cannot open the database ${file}`, file, code, sqlite, hint)
  }
  if (code.startsWith('SQLITE_READONLY')) return readOnly(`cannot write the database ${file}`, file, code, sqlite, hint)
  if (code.startsWith('SQLITE_NOTADB')) return `${file} is not a SQLite database; ${hint}`
  if (code.startsWith('SQLITE_CORRUPT')) return `the database ${file} is damaged (${sqlite}); restore it from a backup`
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return `the database ${file} stayed locked by another process (${sqlite}); wait for it to finish and try again`
  }
  if (code.startsWith('SQLITE_FULL')) return `the database ${file} cannot grow: the disk is full; free some space`
  return `database ${file}: ${sqlite}`
}

/**
 * An existing database SQLite may not write: the line blames what the file
 * system shows is read-only for this process (the file, or the directory
 * where SQLite must create its -wal and -shm files, or both), since a 0644
 * file in a 0555 directory fails with the same "readonly database" as a 0444
 * file. access(2) sees chattr +i too, for root as for anyone.
 */
function readOnly(what: string, file: string, code: string, sqlite: string, hint: string): string {
  const dir = dirname(file)
  const fileLocked = !writable(file)
  const dirLocked = code === 'SQLITE_READONLY_DIRECTORY' || !writable(dir)
  const wal = 'SQLite creates its -wal and -shm files next to the database'
  if (fileLocked && dirLocked) {
    return `${what}: the file and its directory ${dir} are read-only (${wal}); make both writable (chmod u+w, or chattr -i) or ${hint}`
  }
  if (dirLocked) return `${what}: its directory ${dir} is not writable (${wal}); make the directory writable or ${hint}`
  if (fileLocked) return `${what}: the file is read-only; make it writable (chmod u+w, or chattr -i) or ${hint}`
  return `${what} (${sqlite}): the file, its directory ${dir} or its -wal and -shm files are not writable; make them writable or ${hint}`
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * A failure of `VACUUM INTO file`: SQLite could not create the backup file
 * (the live database, already open, is not the one it could not open). Any
 * other failure is returned as it is, to be explained as a database failure.
 */
export function backupFailure(error: unknown, file: string): unknown {
  const e = error as ErrorLike
  if (!isSqliteError(e) || !String(e.code).startsWith('SQLITE_CANTOPEN')) return error
  const problem = fileProblem(file) ?? `directory ${dirname(file)} is not writable`
  const fix = problem.endsWith('does not exist')
    ? 'create it or choose another backup file'
    : problem.endsWith('not writable')
      ? 'choose a file in a writable directory'
      : 'choose another backup file'
  return new CliError(`cannot create the backup ${file}: ${problem}; ${fix}`, EXIT_FAILURE, { cause: error })
}

/**
 * What is wrong with a path a file should be created at, as far as the file
 * system shows: a directory missing on the way, or a directory where the file
 * should be. Undefined when nothing is visibly wrong.
 */
function fileProblem(file: string): string | undefined {
  const dir = dirname(file)
  if (!existsSync(dir)) return `directory ${dir} does not exist`
  if (!isDirectory(dir)) return `${dir} is not a directory`
  if (isDirectory(file)) return 'it is a directory, not a file'
  return undefined
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

// --------------------------------------------------------------- PostgreSQL

/** What names the PostgreSQL URL, unless a command says otherwise (FailureContext.urlOption). */
const URL_OPTION = 'DATABASE_URL or --db'

/**
 * A PostgreSQL connection refused at start-up, as one line naming the URL
 * (its password hidden) and what to run or change. `url` is already redacted.
 */
export async function postgresFailure(problem: ConnectProblem, url: string, option = URL_OPTION): Promise<string> {
  const u = new URL(url)
  const host = u.hostname || 'localhost'
  const port = u.port || '5432'
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  const role = decodeURIComponent(u.username) || 'postgres'
  const database = decodeURIComponent(u.pathname.slice(1)) || role
  const use = `cannot use the PostgreSQL database ${url}`
  const reach = `cannot reach the PostgreSQL database ${url}`
  switch (problem.kind) {
    case 'no-database': {
      const name = problem.database || database
      return `${use}: database "${name}" does not exist on ${where}; create it (as a role that may create databases): createdb -h ${host} -p ${port} -O ${role} ${shellWord(name)}, or in psql: CREATE DATABASE ${sqlName(name)} OWNER ${sqlName(role)};`
    }
    case 'no-role': {
      const name = problem.role || role
      return `${use}: role "${name}" does not exist on ${where}; create it: createuser -h ${host} -p ${port} --pwprompt ${shellWord(name)}, or in psql: CREATE ROLE ${sqlName(name)} LOGIN PASSWORD '...'; (or name another role in ${option})`
    }
    case 'no-login':
      return `${use}: role "${problem.role || role}" may not log in; allow it in psql: ALTER ROLE ${sqlName(problem.role || role)} LOGIN; (or name another role in ${option})`
    case 'password':
      return `${use}: password authentication failed for role "${problem.role || role}"; check the password in ${option} (URL-encode any @ : / ? # %), or the role's password on the server (ALTER ROLE ... PASSWORD) and its pg_hba.conf method`
    case 'tls-required':
      return `${use}: the server's pg_hba.conf admits role "${problem.role || role}" from this host only over TLS (hostssl); set sslmode=require in the URL (${option}; verify-full, with sslrootcert=CA-FILE, also checks the server's certificate)`
    case 'no-hba-entry':
      return `${use}: the server's pg_hba.conf has no line for role "${problem.role || role}", database "${problem.database || database}" from ${problem.client || 'this host'}; add one on the server (and reload it), or connect as a role it admits`
    case 'tls-unavailable':
      return `${use}: the URL asks for TLS (sslmode) but the server on ${where} does not offer it; set sslmode=disable (or prefer) in the URL (${option}), or turn ssl on in the server's postgresql.conf`
    case 'certificate':
      return `${use}: the server's TLS certificate did not verify (${oneLine(problem.reason)}); name the CA that signed it with sslrootcert=/path/to/ca.crt in ${option}, or use sslmode=require to encrypt without verifying`
    case 'too-many-connections':
      return `${use}: the server on ${where} has no connection left (too many clients); raise its max_connections or lower DATABASE_POOL_MAX`
    case 'refused':
    case 'timeout': {
      if (isIP(host) === 0 && (await resolves(host)) === false) {
        return `${reach}: the host name ${host} does not resolve; check the host in ${option}`
      }
      const what = problem.kind === 'refused' ? 'the connection was refused' : 'no answer within 5 s'
      return `${reach}: ${what}; is PostgreSQL running at ${where} (and listening there: listen_addresses, port, a firewall)? Check the host and port in ${option}`
    }
  }
}

/** A name as psql takes it: bare when it is a plain lower-case identifier, else double-quoted. */
const sqlName = (name: string) => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`)
/** A word as a shell takes it. */
const shellWord = (word: string) => (/^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

// ------------------------------------------------------------------ helpers

/** The message of an error on one line: Bun's and SQLite's messages sometimes span several. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim()
}

function reason(e: ErrorLike): string {
  if (e === null || e === undefined) return 'unknown error'
  if (typeof e !== 'object') return oneLine(String(e))
  const message = oneLine(String(e.message || e.name || 'unknown error'))
  return e.code && !message.includes(e.code) ? `${message} (${e.code})` : message
}

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

/** An error the PostgreSQL server answered (wrong password, no such database, ...). */
function isPostgresError(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'PostgresError'
}
