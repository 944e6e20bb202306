import { closeSync, existsSync, openSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { redactUrl } from '../../config.ts'
import { contentsOf, refuseOthers } from '../../db/sqlite/migrate.ts'
import { openReadOnly } from '../../db/sqlite/open.ts'
import type { Command } from '../command.ts'
import { backupFailure, noDatabase } from '../diagnose/sqlite.ts'
import { UsageError } from '../errors.ts'

/** VACUUM INTO: a consistent snapshot of the live database, taken while it serves. */
export const backupCommand: Command = {
  name: 'backup',
  usage: '<file> [--db FILE]',
  summary: ['write a consistent copy of the live SQLite database', '(PostgreSQL: use pg_dump)'],
  args: 1,
  options: ['db'],
  run({ config, args }) {
    if (config.databaseUrl) {
      throw new UsageError(
        `backup: the database is PostgreSQL (${redactUrl(config.databaseUrl)}); back it up with pg_dump, e.g. pg_dump -Fc -f conduit.dump "$DATABASE_URL"`,
      )
    }
    const file = resolve(args[0]!)
    if (existsSync(file)) throw new UsageError(`backup: ${file} already exists; choose a new file name`)
    if (!existsSync(config.databasePath)) throw noDatabase(config.databasePath)
    // read only: the database is never changed, and a read-only file or one another user lets this one read will do
    const db = openReadOnly(config.databasePath)
    try {
      // another program's file is refused as migrate refuses it (a newer Conduit's is backed up all the same)
      refuseOthers(contentsOf(db))
    } catch (e) {
      db.close()
      throw e
    }
    let made = false
    try {
      // made first, empty and readable by its owner only (it holds the signing secret and the password
      // hashes): VACUUM INTO fills an empty file, and would make a new one 0644 under the usual umask
      closeSync(openSync(file, 'wx', 0o600))
      made = true
      // (query_only refuses VACUUM INTO too, though it writes the backup alone)
      db.run('PRAGMA query_only = OFF')
      db.query('VACUUM INTO ?').run(file)
    } catch (e) {
      // no half-written or empty backup left behind to be mistaken for one
      if (made) rmSync(file, { force: true })
      if ((e as { code?: unknown }).code === 'EEXIST') throw new UsageError(`backup: ${file} already exists; choose a new file name`)
      throw backupFailure(e, file)
    } finally {
      db.close()
    }
    console.log(`backup written to ${file}`)
    return 0
  },
}
