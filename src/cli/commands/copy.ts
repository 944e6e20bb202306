import type { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { redactUrl, setDatabase } from '../../config.ts'
import { copyDatabase, TargetNotEmpty } from '../../db/copy.ts'
import { MigrationError } from '../../db/migration-error.ts'
import { openStore } from '../../db/open.ts'
import { contentsOf, migrate, migrations, refuseUnknown } from '../../db/sqlite/migrate.ts'
import { openReadOnly, openWritable } from '../../db/sqlite/open.ts'
import { type Command, untimed } from '../command.ts'
import { noDatabase } from '../diagnose/sqlite.ts'
import { CliError, type ErrorLike, reason, UsageError } from '../errors.ts'
import { onStop } from '../stopping.ts'
import { usageError } from '../help.ts'

/** A whole SQLite database into an empty PostgreSQL one, with progress and a final count. */
export const copyCommand: Command = {
  name: 'copy',
  usage: '--from FILE --to URL',
  summary: ['move a whole SQLite database into an EMPTY', 'PostgreSQL database (tokens keep working)'],
  args: 0,
  options: ['from', 'to'],
  async run({ config, flags, context }) {
    if (flags.from === undefined || flags.to === undefined) throw usageError(copyCommand)
    // a failure names the database by the option that named it
    Object.assign(context, { pathOption: '--from', urlOption: '--to' })
    // a mistake on the command line (status 2) is said before a missing file (1)
    const target = { ...config }
    setDatabase(target, flags.to)
    if (!target.databaseUrl) throw new UsageError(`copy: --to must be a postgres:// URL, got "${flags.to}"`)
    const source = resolve(flags.from)
    if (!existsSync(source)) throw noDatabase(source, '--from')
    // SQLite removes its -wal when the last connection closes: one there means a server still
    // writing (or one that stopped without closing), whose writes after this point the copy misses
    if (existsSync(`${source}-wal`))
      console.error(
        `copy: warning: ${source} is open in another process (a server?), or was not closed: what it writes from now on is not copied; stop the service first, or copy a backup`,
      )
    Object.assign(context, { databasePath: source, databaseUrl: redactUrl(target.databaseUrl) })
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
    const { store } = await openStore(untimed(target)).catch((e) => {
      finish()
      throw e
    })
    const tty = process.stderr.isTTY
    let last = ''
    try {
      const t0 = performance.now()
      const report = await copyDatabase(db, store.bulk, (table, done, total) => {
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
      console.log(`copied ${source} to ${store.location} in ${((performance.now() - t0) / 1000).toFixed(1)} s; every table's count matches`)
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
  },
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
