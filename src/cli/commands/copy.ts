import type { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Config, redactUrl, setDatabase } from '../../config.ts'
import { type BulkSource, copyDatabase, postgresSource, sqliteSource, TargetNotEmpty } from '../../db/copy.ts'
import { MigrationError } from '../../db/migration-error.ts'
import { openStore } from '../../db/open.ts'
import { contentsOf, migrate, migrations, refuseUnknown } from '../../db/sqlite/migrate.ts'
import { openReadOnly, openWritable } from '../../db/sqlite/open.ts'
import { type Command, untimed } from '../command.ts'
import { noDatabase } from '../diagnose/sqlite.ts'
import { CliError, type ErrorLike, reason, UsageError } from '../errors.ts'
import { onStop } from '../stopping.ts'
import { usageError } from '../help.ts'

/** A whole database into an empty one of the other backend, with progress and a final count. */
export const copyCommand: Command = {
  name: 'copy',
  usage: '--from FILE|URL --to URL|FILE',
  summary: ['move a whole database between SQLite and PostgreSQL,', 'into an EMPTY one (tokens keep working)'],
  args: 0,
  options: ['from', 'to'],
  async run({ config, flags, context }) {
    if (flags.from === undefined || flags.to === undefined) throw usageError(copyCommand)
    // a mistake on the command line (status 2) is said before a missing file (1)
    const from = { ...config }
    setDatabase(from, flags.from)
    const target = { ...config }
    setDatabase(target, flags.to)
    if (!from.databaseUrl === !target.databaseUrl)
      throw new UsageError(
        `copy: moves a database between SQLite and PostgreSQL: one of --from and --to is a file, the other a postgres:// URL (got "${flags.from}" and "${flags.to}"); within one backend, conduit backup or pg_dump`,
      )
    // a failure names the database by the option that named it
    if (from.databaseUrl) {
      Object.assign(context, {
        pathOption: '--to',
        urlOption: '--from',
        databasePath: resolve(target.databasePath),
        databaseUrl: redactUrl(from.databaseUrl),
      })
      return copyFromPostgres(from.databaseUrl, target)
    }
    Object.assign(context, { pathOption: '--from', urlOption: '--to' })
    const source = resolve(flags.from)
    if (!existsSync(source)) throw noDatabase(source, '--from')
    // SQLite removes its -wal when the last connection closes: one there means a server still
    // writing (or one that stopped without closing), whose writes after this point the copy misses
    if (existsSync(`${source}-wal`))
      console.error(
        `copy: warning: ${source} is open in another process (a server?), or was not closed: what it writes from now on is not copied; stop the service first, or copy a backup`,
      )
    Object.assign(context, { databasePath: source, databaseUrl: redactUrl(target.databaseUrl!) })
    // the temporary copy of an older source holds the signing secret and the password hashes:
    // removed on a stop too (Ctrl-C, a hang-up, SIGTERM), not left in TMPDIR. Listened for before it
    // is made: a signal during the (synchronous) copying is handled once it returns
    let cleanup = () => {}
    const listening = onStop(() => cleanup())
    const finish = () => {
      listening()
      cleanup()
    }
    let db: Database
    try {
      ;({ db, done: cleanup } = readSource(source))
    } catch (e) {
      finish()
      throw e
    }
    return copyInto(sqliteSource(db), source, target, finish)
  },
}

/**
 * A PostgreSQL database into a new (or empty) SQLite file. The source is only read, in one
 * snapshot; one of an older schema version is refused (it is not migrated: it stays as it was).
 */
async function copyFromPostgres(url: string, target: Config): Promise<number> {
  // PostgreSQL's modules only where it is used, as openStore loads them
  const { connect } = await import('../../db/postgres/client.ts')
  const { migrations: pgMigrations, schemaVersion } = await import('../../db/postgres/migrate.ts')
  const sql = connect(url, { poolMax: 1, prepare: target.databasePrepare })
  const version = await schemaVersion(sql).catch(async (e) => {
    await sql.close()
    throw e
  })
  if (version !== pgMigrations.length) {
    await sql.close()
    throw new UsageError(
      version === 0
        ? `copy: ${redactUrl(url)} holds no Conduit database (--from)`
        : `copy: ${redactUrl(url)} is at schema version ${version}, this conduit's is ${pgMigrations.length}: migrate it first with the conduit that will serve it (conduit migrate --db URL), or copy with the conduit of its version`,
    )
  }
  return copyInto(postgresSource(sql), redactUrl(url), target, () => void sql.close())
}

/** The copy itself, into the target `config` names (opened, and migrated if new): progress, the counts, the summary. */
async function copyInto(source: BulkSource, named: string, config: Config, finish: () => void): Promise<number> {
  const { store } = await openStore(untimed(config)).catch((e) => {
    finish()
    throw e
  })
  const tty = process.stderr.isTTY
  let last = ''
  try {
    const t0 = performance.now()
    const report = await copyDatabase(source, store.bulk, (table, done, total) => {
      const line = `copy: ${table} ${count(done)} of ${count(total)}`
      if (tty) process.stderr.write(`\r\x1b[K${line}`)
      else if (done === total && line !== last) console.error(line)
      last = line
    })
    if (tty) process.stderr.write('\n')
    const wrong = report.tables.filter((t) => t.source !== t.target)
    for (const t of report.tables) {
      console.log(
        `${t.table.padEnd(14)} ${count(t.source).padStart(10)} -> ${count(t.target).padStart(10)}${t.source === t.target ? '' : '  MISMATCH'}`,
      )
    }
    if (wrong.length) throw new CliError(`copy: ${wrong.map((t) => t.table).join(', ')} differ after the copy; the target is not usable`)
    console.log(`copied ${named} to ${store.location} in ${((performance.now() - t0) / 1000).toFixed(1)} s; every table's count matches`)
    // a server started on the target made a secret and holds it in memory: the copied tokens fail there until it restarts
    if (report.secretReplaced)
      console.error(
        `copy: warning: ${store.location} had a signing secret of its own, now the source's (its tokens keep working): restart any instance already serving it, which holds the old one until then`,
      )
    return 0
  } catch (e) {
    if (e instanceof TargetNotEmpty) throw new UsageError(`copy: ${e.message} at ${store.location}; copy needs an empty database`)
    throw e
  } finally {
    finish()
    await store.close()
  }
}

/**
 * The source, read as it is: never changed (a backup stays the backup it
 * was). One of an older schema version is read from a copy in a temporary
 * directory (TMPDIR), migrated there and removed after.
 */
function readSource(source: string): { db: Database; done: () => void } {
  const reading = openReadOnly(source)
  try {
    const contents = contentsOf(reading)
    try {
      refuseUnknown(contents, '--from')
    } catch (e) {
      // named by its path (the failure's line would name the target)
      throw e instanceof MigrationError ? new UsageError(`${source}: ${e.message}`) : e
    }
    if (contents.version === migrations.length) return { db: reading, done: () => reading.close() }
    // (a directory only this user may enter: the copy holds the signing secret and the password hashes)
    const dir = mkdtempSync(join(tmpdir(), 'conduit-copy-'))
    try {
      const file = join(dir, 'source.db')
      reading.run('PRAGMA query_only = OFF') // (VACUUM INTO writes the copy alone)
      reading.query('VACUUM INTO ?').run(file)
      reading.close()
      const db = openWritable(file)
      try {
        migrate(db)
      } catch (e) {
        db.close()
        throw e
      }
      return {
        db,
        done: () => {
          db.close()
          rmSync(dir, { recursive: true, force: true })
        },
      }
    } catch (e) {
      rmSync(dir, { recursive: true, force: true })
      // named for what failed: the copy in TMPDIR (its disk may be the full one), not the source or the target
      throw new CliError(
        `copy: could not make and migrate a copy of ${source} (schema version ${contents.version}) in ${tmpdir()}: ${reason(e as ErrorLike)}; set TMPDIR to a directory with room for one copy of it`,
      )
    }
  } catch (e) {
    reading.close()
    throw e
  }
}

/** A count as the progress lines and the summary both write it: `1,000`. */
const count = (n: number) => n.toLocaleString('en')
