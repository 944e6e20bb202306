/**
 * Configuration: read once at start-up from the environment (and CLI flags,
 * which main.ts layers on top), validated, then passed down as a plain value.
 * Nothing else in the service reads process.env.
 */

import { existsSync } from 'node:fs'
import { isIP } from 'node:net'
import { totalmem } from 'node:os'
import { dirname, resolve } from 'node:path'

export type LogFormat = 'text' | 'json'
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface Config {
  port: number
  host: string
  /** the SQLite file (when no PostgreSQL URL is given) */
  databasePath: string
  /** a postgres:// or postgresql:// URL: PostgreSQL instead of the SQLite file */
  databaseUrl: string | undefined
  /** PostgreSQL connections per process */
  databasePoolMax: number
  /** PostgreSQL: named prepared statements (false behind PgBouncer in transaction mode) */
  databasePrepare: boolean
  /** PostgreSQL: a statement or lock wait longer than this is cancelled (503); 0 = no limit */
  databaseTimeoutMs: number
  /** HS256 signing secret; when undefined one is generated and kept in the database. */
  jwtSecret: string | undefined
  tokenTtlSeconds: number
  /** `*` or an explicit list of allowed origins. */
  corsOrigins: '*' | string[]
  bodyLimitBytes: number
  logFormat: LogFormat
  logLevel: LogLevel
  /** Take the client address from X-Forwarded-For (only behind a trusted proxy). */
  trustProxy: boolean
  /** argon2id cost; the default is the OWASP recommendation. */
  passwordHash: { memoryCost: number; timeCost: number }
  loginThrottle: {
    enabled: boolean
    /** failures per (account, address) pair within the window before 429 */
    perPair: number
    /** failures per account from any address within the window before 429 */
    perAccount: number
    /** failures per client address over all accounts within the window before 429 */
    perAddress: number
    windowSeconds: number
  }
  registrationThrottle: {
    enabled: boolean
    /** registrations per client address within the window before 429 */
    perAddress: number
    windowSeconds: number
  }
  requestTimeoutSeconds: number
  shutdownGraceMs: number
  /** after SIGTERM, keep serving (readiness 503) this long before closing the listener */
  shutdownDelayMs: number
  /** processes serving one port (SO_REUSEPORT) and one database; 1 = this process serves */
  workers: number
  /** PostgreSQL only: this is the one process using the database (no change-log reads per request) */
  singleInstance: boolean
  /** what the caches of one process may hold, in MiB (keys and bookkeeping included) */
  cacheMb: number
  /** the collector's lean policy (src/cli/runtime.ts applies it as the process starts) */
  leanMemory: boolean
  /** answer plain GETs from caches before the framework (false: every request through it; for diagnosis) */
  fastPath: boolean
  /** serve the web app at `/` (false: an API-only deployment; `/` says where the API is) */
  webApp: boolean
  /** GET /metrics answers with this bearer token; undefined: no /metrics (404) */
  metricsToken: string | undefined
  /** benchmarks only: the file where slow requests' times are written at stop (src/trace.ts); undefined: no trace */
  tailTrace: string | undefined
}

export class ConfigError extends Error {}

export const defaults: Config = {
  port: 3000,
  host: '0.0.0.0',
  databasePath: './conduit.db',
  databaseUrl: undefined,
  databasePoolMax: 10,
  databasePrepare: true,
  databaseTimeoutMs: 5000,
  jwtSecret: undefined,
  tokenTtlSeconds: 30 * 24 * 3600,
  corsOrigins: '*',
  bodyLimitBytes: 1024 * 1024,
  logFormat: 'text',
  logLevel: 'info',
  trustProxy: false,
  passwordHash: { memoryCost: 19456, timeCost: 2 },
  loginThrottle: { enabled: true, perPair: 10, perAccount: 100, perAddress: 50, windowSeconds: 15 * 60 },
  registrationThrottle: { enabled: true, perAddress: 20, windowSeconds: 60 * 60 },
  requestTimeoutSeconds: 30,
  shutdownGraceMs: 4000,
  shutdownDelayMs: 0,
  workers: 1,
  singleInstance: false,
  cacheMb: 90,
  leanMemory: false,
  fastPath: true,
  webApp: true,
  metricsToken: undefined,
  tailTrace: undefined,
}

type Env = Record<string, string | undefined>

export function integer(name: string, raw: string, min: number, max: number): number {
  // a negative number is an integer, just out of range ("-0" is not a way to write 0)
  if (!/^(\d+|-[1-9]\d*)$/.test(raw)) throw new ConfigError(`${name} must be an integer, got ${JSON.stringify(raw)}`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`)
  return n
}

/**
 * The address to listen on: an IPv4 or IPv6 address (`[::1]` read as `::1`) or a host name. A
 * port, a scheme or a blank (a CRLF env file's `\r`) would reach the resolver and come back as
 * a lookup failure naming a host that looks right.
 */
export function hostAddress(name: string, raw: string): string {
  const v = /^\[([0-9a-f:.]+)\]$/i.exec(raw)?.[1] ?? raw
  if (isIP(v) || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(v)) return v
  const port = /^[^:]*:(\d+)$/.exec(v)
  throw new ConfigError(
    `${name} must be an address or a host name (0.0.0.0, ::, localhost), got ${JSON.stringify(raw)}${port ? `: give the port with ${name === 'HOST' ? 'PORT' : '--port'}` : ''}`,
  )
}

/** The memory this process's host or container allows, in bytes: the cgroup's limit (Bun reads it) or the RAM. */
export function memoryLimit(): number {
  const constrained = process.constrainedMemory?.() ?? 0
  return constrained > 0 ? Math.min(constrained, totalmem()) : totalmem()
}

/** A boolean variable's value, or undefined when it is neither word (what `boolean` refuses). */
export function booleanWord(raw: string): boolean | undefined {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  return undefined
}

function boolean(name: string, raw: string): boolean {
  const b = booleanWord(raw)
  if (b === undefined) throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`)
  return b
}

function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  const v = raw.trim().toLowerCase() as T
  if (!allowed.includes(v)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`)
  return v
}

/** Every environment variable the service reads, with its meaning (used by --help and the README). */
export const environment = {
  PORT: 'port to listen on (default 3000)',
  HOST: 'address to bind (default 0.0.0.0)',
  DATABASE_URL: 'postgres://user:pass@host:port/db selects PostgreSQL; a file path selects SQLite',
  DATABASE_PATH: 'SQLite database file (default ./conduit.db)',
  DATABASE_POOL_MAX: 'PostgreSQL connections per process (default 10)',
  DATABASE_PREPARED_STATEMENTS: 'PostgreSQL: false behind PgBouncer in transaction mode (default true)',
  DATABASE_TIMEOUT_SECONDS: 'PostgreSQL: a query or lock wait longer than this answers 503 (default 5; 0 = no limit)',
  JWT_SECRET: 'token signing secret, at least 32 characters (default: generated and kept in the database)',
  JWT_TTL_SECONDS: 'token lifetime in seconds (default 2592000 = 30 days)',
  CORS_ORIGINS: 'comma-separated allowed origins (scheme://host[:port]), or * (default *)',
  BODY_LIMIT_BYTES: 'largest accepted request body (default 1048576)',
  LOG_FORMAT: 'text or json (default text)',
  LOG_LEVEL: 'debug, info, warn, error or silent (default info)',
  TRUST_PROXY: 'take the client address from X-Forwarded-For and the scheme from X-Forwarded-Proto (default false)',
  LOGIN_THROTTLE: 'throttle failed logins (default true)',
  LOGIN_THROTTLE_PER_PAIR: 'failures per account and address before 429 (default 10)',
  LOGIN_THROTTLE_PER_ACCOUNT: 'failures per account from all addresses before 429 (default 100)',
  LOGIN_THROTTLE_PER_ADDRESS: 'failures per address over all accounts before 429 (default 50)',
  LOGIN_THROTTLE_WINDOW_SECONDS: 'window of the login throttle (default 900)',
  REGISTRATION_THROTTLE: 'throttle registrations per client address (default true)',
  REGISTRATION_THROTTLE_PER_ADDRESS: 'registrations per address in the window before 429 (default 20)',
  REGISTRATION_THROTTLE_WINDOW_SECONDS: 'window of the registration throttle (default 3600)',
  REQUEST_TIMEOUT_SECONDS: 'idle timeout of a request (default 30)',
  WORKERS: 'processes serving one port and one database (default 1)',
  SHUTDOWN_DELAY_SECONDS: 'after SIGTERM, answer /ready 503 this long before closing (default 0; 5-10 behind a load balancer)',
  SINGLE_INSTANCE: 'PostgreSQL: true only when exactly one process uses the database (default false)',
  CACHE_MB: 'MiB of cached answers and parts one process may keep (default 90, 30 with under 320 MiB per process; see the README)',
  LEAN_MEMORY: 'full collections sooner: about 15 % less peak memory for 2-4 % more CPU (default false, true under 384 MiB per process)',
  FAST_PATH: 'answer plain GETs before the framework (default true; false only to diagnose, it is slower)',
  WEB_APP: 'serve the Conduit web app at / (default true; false for an API-only deployment)',
  METRICS_TOKEN: 'serve Prometheus metrics at /metrics to `Authorization: Bearer <this>` (default: unset, no /metrics)',
  TAIL_TRACE: 'benchmarks only: at stop, write where requests spent their time to this file (bench/tail.ts; default: unset)',
} as const

/**
 * Variables set that this server does not read but one it reads is probably meant by (a typo,
 * `DATABSE_URL`, or a guess at a name, `DATABASE_POOL_SIZE`), each with that one: unread, they
 * would leave the default in silence (a new empty ./conduit.db). Names of four letters are
 * too near other programs' (`PGPORT`, `HOSTNAME`) to guess at.
 */
export function misspelledVariables(env: Env = process.env): [given: string, meant: string][] {
  const known = Object.keys(environment)
  const out: [string, string][] = []
  for (const given of Object.keys(env)) {
    if (Object.hasOwn(environment, given) || !/^[A-Z][A-Z0-9_]{5,}$/.test(given)) continue
    // a letter or two off; else a name cut short (SHUTDOWN_DELAY); else the same first two words (DATABASE_POOL_SIZE)
    const words = (name: string) => name.split('_').slice(0, 2).join('_')
    const rank = (name: string) => {
      const d = editDistance(given, name)
      if (d <= 2) return d
      if (name.startsWith(given)) return 10
      return given.includes('_') && words(given) === words(name) ? 20 + d : Number.POSITIVE_INFINITY
    }
    let best: [string, number] | undefined
    for (const name of known) {
      if (name.length < 6) continue
      const r = rank(name)
      if (r < Number.POSITIVE_INFINITY && (!best || r < best[1])) best = [name, r]
    }
    if (best) out.push([given, best[0]])
  }
  return out
}

/** Levenshtein's distance, with a swap of two neighbours as one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

export function loadConfig(env: Env = process.env): Config {
  const c: Config = structuredClone(defaults)
  const v = (k: keyof typeof environment) => {
    const raw = env[k]
    return raw === undefined || raw === '' ? undefined : raw
  }
  let s: string | undefined
  if ((s = v('PORT'))) c.port = integer('PORT', s, 0, 65535)
  if ((s = v('HOST'))) c.host = hostAddress('HOST', s)
  if ((s = v('DATABASE_PATH'))) c.databasePath = sqliteFile(s)
  if ((s = v('DATABASE_URL'))) setDatabase(c, s)
  if ((s = v('DATABASE_POOL_MAX'))) c.databasePoolMax = integer('DATABASE_POOL_MAX', s, 1, 1000)
  if ((s = v('DATABASE_PREPARED_STATEMENTS'))) c.databasePrepare = boolean('DATABASE_PREPARED_STATEMENTS', s)
  if ((s = v('DATABASE_TIMEOUT_SECONDS'))) c.databaseTimeoutMs = integer('DATABASE_TIMEOUT_SECONDS', s, 0, 3600) * 1000
  if ((s = v('JWT_SECRET'))) {
    if (s.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters')
    c.jwtSecret = s
  }
  if ((s = v('JWT_TTL_SECONDS'))) c.tokenTtlSeconds = integer('JWT_TTL_SECONDS', s, 60, 10 * 365 * 24 * 3600)
  if ((s = v('CORS_ORIGINS'))) {
    const list = s
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean)
    c.corsOrigins = list.includes('*') ? '*' : list.map(origin)
  }
  if ((s = v('BODY_LIMIT_BYTES'))) c.bodyLimitBytes = integer('BODY_LIMIT_BYTES', s, 1024, 1024 ** 3)
  if ((s = v('LOG_FORMAT'))) c.logFormat = oneOf('LOG_FORMAT', s, ['text', 'json'] as const)
  if ((s = v('LOG_LEVEL'))) c.logLevel = oneOf('LOG_LEVEL', s, ['debug', 'info', 'warn', 'error', 'silent'] as const)
  if ((s = v('TRUST_PROXY'))) c.trustProxy = boolean('TRUST_PROXY', s)
  if ((s = v('LOGIN_THROTTLE'))) c.loginThrottle.enabled = boolean('LOGIN_THROTTLE', s)
  if ((s = v('LOGIN_THROTTLE_PER_PAIR'))) c.loginThrottle.perPair = integer('LOGIN_THROTTLE_PER_PAIR', s, 1, 1e6)
  if ((s = v('LOGIN_THROTTLE_PER_ACCOUNT'))) c.loginThrottle.perAccount = integer('LOGIN_THROTTLE_PER_ACCOUNT', s, 1, 1e6)
  if ((s = v('LOGIN_THROTTLE_PER_ADDRESS'))) c.loginThrottle.perAddress = integer('LOGIN_THROTTLE_PER_ADDRESS', s, 1, 1e6)
  if ((s = v('LOGIN_THROTTLE_WINDOW_SECONDS')))
    c.loginThrottle.windowSeconds = integer('LOGIN_THROTTLE_WINDOW_SECONDS', s, 1, 7 * 24 * 3600)
  if ((s = v('REGISTRATION_THROTTLE'))) c.registrationThrottle.enabled = boolean('REGISTRATION_THROTTLE', s)
  if ((s = v('REGISTRATION_THROTTLE_PER_ADDRESS')))
    c.registrationThrottle.perAddress = integer('REGISTRATION_THROTTLE_PER_ADDRESS', s, 1, 1e6)
  if ((s = v('REGISTRATION_THROTTLE_WINDOW_SECONDS')))
    c.registrationThrottle.windowSeconds = integer('REGISTRATION_THROTTLE_WINDOW_SECONDS', s, 1, 7 * 24 * 3600)
  if ((s = v('WORKERS'))) c.workers = integer('WORKERS', s, 1, 256)
  if ((s = v('SHUTDOWN_DELAY_SECONDS'))) c.shutdownDelayMs = integer('SHUTDOWN_DELAY_SECONDS', s, 0, 600) * 1000
  if ((s = v('SINGLE_INSTANCE'))) c.singleInstance = boolean('SINGLE_INSTANCE', s)
  if ((s = v('CACHE_MB'))) c.cacheMb = integer('CACHE_MB', s, 1, 65536)
  if ((s = v('LEAN_MEMORY'))) c.leanMemory = boolean('LEAN_MEMORY', s)
  if ((s = v('FAST_PATH'))) c.fastPath = boolean('FAST_PATH', s)
  if ((s = v('WEB_APP'))) c.webApp = boolean('WEB_APP', s)
  if ((s = v('METRICS_TOKEN'))) {
    if (/\s/.test(s)) throw new ConfigError('METRICS_TOKEN must not contain spaces')
    c.metricsToken = s
  }
  if ((s = v('TAIL_TRACE'))) {
    // written only at the stop: a directory that is not there would lose the whole run in silence
    if (!existsSync(dirname(resolve(s)))) throw new ConfigError(`TAIL_TRACE: the directory of ${resolve(s)} does not exist`)
    c.tailTrace = s
  }
  if ((s = v('REQUEST_TIMEOUT_SECONDS'))) c.requestTimeoutSeconds = integer('REQUEST_TIMEOUT_SECONDS', s, 1, 255)
  return c
}

/**
 * One entry of CORS_ORIGINS as a browser writes its Origin header (`https://app.example` or with
 * a port; scheme and host lower-cased, a trailing `/` dropped); anything else is refused, since it
 * would never match and the site would be refused without a word.
 */
function origin(entry: string): string {
  const url = URL.parse(entry)
  // (a `?` or `#` with nothing after it leaves url.search and url.hash empty: the entry itself is checked)
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.username || url.password || /[?#]/.test(entry))
    throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an origin (scheme://host or scheme://host:port, nothing after it)`)
  return url.origin
}

/** What a generated password most often needs. */
const PERCENT_ENCODE = '; in a user or password, write % @ : / ? # as %25 %40 %3A %2F %3F %23'

/** The `sslmode` values Bun's client takes (libpq's). */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']

/**
 * `postgres://` or `postgresql://` selects PostgreSQL, and must name its database (no silent
 * default to the maintenance database); another `scheme://` is refused rather than taken for a
 * file name; anything else is a SQLite file path (sqliteFile).
 */
export function setDatabase(c: Config, value: string): void {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL
    try {
      url = new URL(value)
      // the client decodes them: a `%` that starts no escape failed there as "URI error"
      decodeURIComponent(url.username)
      decodeURIComponent(url.password)
    } catch {
      throw new ConfigError(`the PostgreSQL URL is not a valid URL (postgres://user:password@host:port/database)${PERCENT_ENCODE}`)
    }
    if (url.pathname.length <= 1)
      throw new ConfigError('the PostgreSQL URL names no database (postgres://user:password@host:port/database)')
    const mode = url.searchParams.get('sslmode')
    if (mode !== null && !SSL_MODES.includes(mode))
      throw new ConfigError(`the PostgreSQL URL's sslmode must be one of ${SSL_MODES.join(', ')}, got "${mode}"`)
    c.databaseUrl = value
  } else if (/^[a-z][a-z\d+.-]*:\/\//i.test(value) && !SQLITE_URI.test(value)) {
    const scheme = value.slice(0, value.indexOf(':'))
    throw new ConfigError(`${scheme}:// is not a database this server uses: a postgres:// URL selects PostgreSQL, a file path SQLite`)
  } else {
    c.databaseUrl = undefined
    c.databasePath = sqliteFile(value)
  }
}

/** Other tools' way to name a SQLite file (sqliteFile). */
const SQLITE_URI = /^(file|sqlite3?):/i

/**
 * A SQLite file path, as given. `file:` and `sqlite:` URIs (other tools' way to name a SQLite
 * file) are refused with the plain path to write instead: taken as paths, they would make a new
 * empty database named `file:c.db` beside the one meant (docs/DECISIONS.md).
 */
function sqliteFile(value: string): string {
  // `DATABASE_PATH=conduit.db ` from an env file would make a new empty database beside the one meant
  // (quoted as JSON: a CRLF file's \r would send the cursor back over the message)
  if (value.trim() !== value)
    throw new ConfigError(`the database path ${JSON.stringify(value)} begins or ends with white space: write the path without it`)
  const uri = SQLITE_URI.exec(value)
  if (!uri) return value
  throw new ConfigError(
    `${value} is not a database this server uses: a postgres:// URL selects PostgreSQL, a file path SQLite (write ${uriPath(value, uri[1]!.toLowerCase()) ?? 'the path'} alone)`,
  )
}

/**
 * The file a `file:` or `sqlite:` URI names, where that is certain: `file:c.db`, `file:///data/c.db`,
 * `file://localhost/data/c.db` (RFC 8089, percent-decoded), `sqlite:c.db`. Tools read
 * `sqlite://...` differently (SQLAlchemy's `sqlite:///c.db` is relative), and a `file:` URI of
 * another host is no local path: no suggestion for those.
 */
function uriPath(value: string, scheme: string): string | undefined {
  let rest = value.slice(scheme.length + 1).replace(/[?#].*$/, '')
  if (rest.startsWith('//')) {
    if (scheme !== 'file') return undefined
    const host = rest.slice(2, rest.indexOf('/', 2) < 0 ? undefined : rest.indexOf('/', 2))
    if (host !== '' && host.toLowerCase() !== 'localhost') return undefined
    rest = rest.slice(2 + host.length)
  }
  try {
    return decodeURIComponent(rest) || undefined
  } catch {
    return undefined
  }
}

/** SQLite's in-memory database: one process's own, empty at its start, gone at its stop. */
export const inMemory = (c: Config): boolean => c.databaseUrl === undefined && c.databasePath === ':memory:'

/** The database as logs and messages name it: the URL without its password, or the file's absolute path. */
export const databaseName = (c: Config): string =>
  c.databaseUrl ? redactUrl(c.databaseUrl) : inMemory(c) ? ':memory:' : resolve(c.databasePath)

/** A database URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    // libpq's form, which Bun's client takes too: ?password=...
    for (const k of [...u.searchParams.keys()]) if (/password/i.test(k)) u.searchParams.set(k, '***')
    return u.toString()
  } catch {
    return 'postgres://(unparsable URL)'
  }
}
