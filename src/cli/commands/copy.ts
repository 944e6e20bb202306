import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { redactUrl, setDatabase } from '../../config.ts'
import { copyDatabase, TargetNotEmpty } from '../../db/copy.ts'
import { openStore } from '../../db/open.ts'
import { migrate } from '../../db/sqlite/migrate.ts'
import { openDatabase } from '../../db/sqlite/open.ts'
import { type Command, untimed } from '../command.ts'
import { noDatabase } from '../diagnose/sqlite.ts'
import { CliError, UsageError } from '../errors.ts'
import { usageError } from '../help.ts'

/** A whole SQLite database into an empty PostgreSQL one, with progress and a final count. */
export const copyCommand: Command = {
  name: 'copy',
  usage: '--from FILE --to URL',
  summary: ['move a whole SQLite database into an EMPTY', 'PostgreSQL database (tokens keep working)'],
  args: 0,
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
    Object.assign(context, { databasePath: source, databaseUrl: redactUrl(target.databaseUrl) })
    const db = openDatabase(source)
    migrate(db)
    const { store } = await openStore(untimed(target))
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
      return 0
    } catch (e) {
      if (e instanceof TargetNotEmpty) throw new UsageError(`copy: ${e.message} at ${store.location}; copy needs an empty database`)
      throw e
    } finally {
      db.close()
      await store.close()
    }
  },
}

/** A count as the progress lines and the summary both write it: `1,000`. */
const count = (n: number) => n.toLocaleString('en')
