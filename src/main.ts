#!/usr/bin/env bun
import { parseArgs } from 'node:util'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { version } from '../package.json'
import { backupFailure, CliError, type FailureContext, joinNegativeNumbers, report, UsageError, usageFromParseArgs } from './cli/errors.ts'
import { type Config, environment, integer, loadConfig, redactUrl, setDatabase } from './config.ts'
import { copyDatabase, TargetNotEmpty } from './db/copy.ts'
import { openStore } from './db/open.ts'
import { openDatabase } from './db/sqlite/open.ts'
import { migrate } from './db/sqlite/migrate.ts'
import { createLogger } from './log.ts'
import { NotEmptyError, SEED_PASSWORD, seedDatabase } from './db/seed.ts'
import { serve } from './server.ts'
import { supervise, WORKER_ENV } from './cluster.ts'

const HELP = `conduit ${version} — the RealWorld "Conduit" API in one binary

Usage:
  conduit [serve] [--port N] [--host ADDR] [--db FILE|URL] [--workers N]
                                                         serve the API (the default command)
  conduit migrate [--db FILE|URL]                        apply pending database migrations and exit
  conduit backup <file> [--db FILE]                      write a consistent copy of the live SQLite database
                                                         (PostgreSQL: use pg_dump)
  conduit copy --from FILE --to URL                      move a whole SQLite database into an EMPTY
                                                         PostgreSQL database (tokens keep working)
  conduit healthcheck [--port N] [--host ADDR]           exit 0 when the local server answers /health
  conduit seed [--db FILE|URL] [--users N] [--articles N] [--seed N]
                                                         fill an empty database with demo data
                                                         (defaults: 1000 users, 100000 articles, seed 1;
                                                         every user's password is "${SEED_PASSWORD}")
  conduit --version                                      print the version
  conduit --help                                         print this help

Any command also takes --debug: log at the debug level and, should it fail, print
the stack after the one-line explanation (LOG_LEVEL=debug does the same).

Flags override the environment. Environment:
${Object.entries(environment)
  .map(([k, v]) => `  ${k.padEnd(31)}${v}`)
  .join('\n')}

Swagger UI is served at /swagger, the OpenAPI document at /swagger/json.`

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  db: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  users: { type: 'string' },
  articles: { type: 'string' },
  seed: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  workers: { type: 'string' },
  debug: { type: 'boolean' },
} as const
/** The options that take a number: `--articles -5` reaches the range check instead of confusing parseArgs. */
const NUMERIC = ['--port', '--users', '--articles', '--seed', '--workers']

/** What a failure message can name, filled in as main learns it. */
const context: FailureContext = {}
/** Whether a failure also prints its stack (--debug or LOG_LEVEL=debug). */
let debug = false

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; allowPositionals: true; strict: true }>>
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(argv, NUMERIC), options: FLAGS, allowPositionals: true, strict: true })
  } catch (e) {
    throw usageFromParseArgs(e)
  }
  const { values, positionals } = parsed
  debug = values.debug === true
  if (values.help) return print(HELP)
  if (values.version) return print(version)

  const [command = 'serve', ...rest] = positionals
  context.command = command
  const config = loadConfig()
  if (values.debug) config.logLevel = 'debug'
  debug = config.logLevel === 'debug'
  if (values.port !== undefined) config.port = integer('--port', values.port, 0, 65535)
  if (values.host !== undefined) config.host = values.host
  if (values.db !== undefined) setDatabase(config, values.db)
  if (values.workers !== undefined) config.workers = integer('--workers', values.workers, 1, 256)
  Object.assign(context, {
    databasePath: config.databaseUrl ? undefined : config.databasePath,
    databaseUrl: config.databaseUrl && redactUrl(config.databaseUrl),
    host: config.host,
    port: config.port,
  })
  const expectArgs = (n: number, usage: string) => {
    if (rest.length !== n) throw new UsageError(`usage: conduit ${usage}`)
  }

  switch (command) {
    case 'serve':
      expectArgs(0, 'serve [--port N] [--host ADDR] [--db FILE|URL] [--workers N]')
      return config.workers > 1 && !process.env[WORKER_ENV]
        ? supervise(config, createLogger(config.logFormat, config.logLevel))
        : runServer(config)
    case 'migrate': {
      expectArgs(0, 'migrate [--db FILE|URL]')
      const { store, applied } = await openStore(untimed(config))
      try {
        const version = await store.schemaVersion()
        console.log(
          applied.length
            ? `applied migrations ${applied.join(', ')}; schema version ${version}`
            : `up to date at schema version ${version}`,
        )
      } finally {
        await store.close()
      }
      return 0
    }
    case 'backup':
      expectArgs(1, 'backup <file> [--db FILE]')
      return backup(config, rest[0]!)
    case 'seed':
      expectArgs(0, 'seed [--db FILE] [--users N] [--articles N] [--seed N]')
      return seed(config, {
        users: values.users === undefined ? 1000 : integer('--users', values.users, 1, 10_000_000),
        articles: values.articles === undefined ? 100_000 : integer('--articles', values.articles, 0, 100_000_000),
        seed: values.seed === undefined ? 1 : integer('--seed', values.seed, 0, 2 ** 32 - 1),
      })
    case 'copy':
      expectArgs(0, 'copy --from FILE --to URL')
      if (values.from === undefined || values.to === undefined)
        throw new UsageError('usage: conduit copy --from FILE --to URL; see conduit --help')
      return copy(values.from, values.to, config)
    case 'healthcheck':
      expectArgs(0, 'healthcheck [--port N] [--host ADDR]')
      return healthcheck(config)
    default:
      throw new UsageError(`unknown command "${command}"; see conduit --help`)
  }
}

/** The commands that migrate, seed or copy run statements as long as they need (DATABASE_TIMEOUT_SECONDS is for requests). */
const untimed = (config: Config): Config => ({ ...config, databaseTimeoutMs: 0 })

function print(text: string): number {
  console.log(text)
  return 0
}

async function runServer(config: Config): Promise<number> {
  const logger = createLogger(config.logFormat, config.logLevel)
  const running = await serve(config, logger)
  const stop = (signal: string) => {
    running.shutdown(signal).then(
      () => process.exit(0),
      (e) => {
        logger.error('shutdown failed', {}, e)
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  return new Promise<number>(() => {}) // serves until a signal
}

/** VACUUM INTO: a consistent snapshot of the live database, taken while it serves. */
function backup(config: Config, target: string): number {
  if (config.databaseUrl) {
    throw new UsageError(
      `backup: the database is PostgreSQL (${redactUrl(config.databaseUrl)}); back it up with pg_dump, e.g. pg_dump -Fc -f conduit.dump "$DATABASE_URL"`,
    )
  }
  const file = resolve(target)
  if (existsSync(file)) throw new UsageError(`backup: ${file} already exists; choose a new file name`)
  if (!existsSync(config.databasePath)) throw new UsageError(`backup: no database at ${config.databasePath}`)
  const db = openDatabase(config.databasePath)
  try {
    db.query('VACUUM INTO ?').run(file)
  } catch (e) {
    throw backupFailure(e, file)
  } finally {
    db.close()
  }
  console.log(`backup written to ${file}`)
  return 0
}

async function seed(config: Config, o: { users: number; articles: number; seed: number }): Promise<number> {
  const { store } = await openStore(untimed(config))
  try {
    const t0 = performance.now()
    const counts = await seedDatabase(store.bulk, {
      ...o,
      tags: 1000,
      follows: 10,
      favoritesPerArticle: 1,
      commentsPerArticle: 0.2,
      passwordHash: await Bun.password.hash(SEED_PASSWORD, { algorithm: 'argon2id', ...config.passwordHash }),
      onProgress: (m) => console.error(`seed: ${m}`),
    })
    console.log(`seeded ${store.location} in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`)
  } catch (e) {
    if (!(e instanceof NotEmptyError)) throw e
    const users = `${e.users} user${e.users === 1 ? '' : 's'}`
    const where = config.databaseUrl ? store.location : resolve(config.databasePath)
    throw new UsageError(`seed: the database ${where} already has ${users}; seed fills only an empty database: name a new one with --db`)
  } finally {
    await store.close()
  }
  return 0
}

/** conduit copy: a whole SQLite database into an empty PostgreSQL one, with progress and a final count. */
async function copy(from: string, to: string, config: Config): Promise<number> {
  const source = resolve(from)
  if (!existsSync(source)) throw new UsageError(`copy: no SQLite database at ${source}`)
  const target = { ...config }
  setDatabase(target, to)
  if (!target.databaseUrl) throw new UsageError(`copy: --to must be a postgres:// URL, got "${to}"`)
  Object.assign(context, { databasePath: source, databaseUrl: redactUrl(target.databaseUrl) })
  const db = openDatabase(source)
  migrate(db)
  const { store } = await openStore(untimed(target))
  const tty = process.stderr.isTTY
  let last = ''
  try {
    const t0 = performance.now()
    const report = await copyDatabase(db, store.bulk, (table, done, total) => {
      const line = `copy: ${table} ${done.toLocaleString('en')} of ${total.toLocaleString('en')}`
      if (tty) process.stderr.write(`\r\x1b[K${line}`)
      else if (done === total && line !== last) console.error(line)
      last = line
    })
    if (tty) process.stderr.write('\n')
    const wrong = report.tables.filter((t) => t.source !== t.target)
    for (const t of report.tables)
      console.log(
        `${t.table.padEnd(14)} ${String(t.source).padStart(10)} -> ${String(t.target).padStart(10)}${t.source === t.target ? '' : '  MISMATCH'}`,
      )
    if (wrong.length) throw new CliError(`copy: ${wrong.map((t) => t.table).join(', ')} differ after the copy; the target is not usable`)
    console.log(`copied ${source} to ${store.location} in ${((performance.now() - t0) / 1000).toFixed(1)} s; every table's count matches`)
    return 0
  } catch (e) {
    if (e instanceof TargetNotEmpty) throw new UsageError(`copy: ${e.message} at ${store.location}; copy needs an empty database`)
    throw e
  } finally {
    db.close()
    await store.close()
  }
}

async function healthcheck(config: Config): Promise<number> {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/health`
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) })
    if (res.ok) return 0
    console.error(`healthcheck: ${url} answered ${res.status}`)
  } catch (e) {
    console.error(`healthcheck: ${url} unreachable (${(e as Error).message})`)
  }
  return 1
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  // one line on stderr, never the minified source Bun prints with an error (src/cli/errors.ts)
  async (e) => process.exit(await report(e, context, debug)),
)
