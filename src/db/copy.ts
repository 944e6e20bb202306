import type { Database } from 'bun:sqlite'
import { type BulkLoad, SEQUENCED, TABLE_NAMES, TABLES, type Table } from './bulk.ts'

/** The target of a copy must hold no data (a signing secret of a server that started once is fine). */
export class TargetNotEmpty extends Error {
  constructor(readonly rows: Record<string, number>) {
    super(
      `the target database is not empty (${Object.entries(rows)
        .map(([t, n]) => `${n} ${t}`)
        .join(', ')})`,
    )
  }
}

/** Rows held between the source's read and the target's insert: memory stays bounded whatever a table's size, one statement per batch. */
const BATCH = 5000
/** Tables without a rowid: read in primary-key order. */
const ORDER: Partial<Record<Table, string>> = {
  settings: 'key',
  follows: 'follower_id, followee_id',
  article_tags: 'tag_id, article_id',
  favorites: 'user_id, article_id',
  slug_counters: 'base',
}

export interface CopyReport {
  tables: { table: Table; source: number; target: number }[]
  /** The target held a signing secret of its own (a server started on it), now the source's. */
  secretReplaced: boolean
}

/**
 * Copies a whole (migrated) SQLite database into an EMPTY database of the
 * other backend: every row of every table with its ids, the signing secret
 * (issued tokens keep working), counters recomputed, id sequences past the
 * source's highest ids ever. The source is read in one snapshot (a live
 * database can be copied). Ends by counting every table on both sides.
 */
export async function copyDatabase(
  source: Database,
  target: BulkLoad,
  progress: (table: Table, done: number, total: number) => void,
): Promise<CopyReport> {
  const data = TABLE_NAMES.filter((t) => t !== 'settings')
  const present: Record<string, number> = {}
  for (const t of data) {
    const n = await target.count(t)
    if (n > 0) present[t] = n
  }
  if (Object.keys(present).length) throw new TargetNotEmpty(present)
  const targetSecret = await target.secret()

  source.run('BEGIN') // one snapshot of the source for the whole copy
  try {
    const totals = Object.fromEntries(
      TABLE_NAMES.map((t) => [t, source.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n]),
    ) as Record<Table, number>
    // AUTOINCREMENT keeps the highest id ever (also of deleted rows): the target's sequences start past it
    const floors: Partial<Record<Table, number>> = {}
    for (const t of SEQUENCED) {
      const seq = source.query<{ seq: number }, [string]>('SELECT seq FROM sqlite_sequence WHERE name = ?').get(t)?.seq ?? 0
      const max = source.query<{ m: number | null }, []>(`SELECT max(id) AS m FROM ${t}`).get()?.m ?? 0
      floors[t] = Math.max(seq, max)
    }
    await target.load(async (into) => {
      for (const t of TABLE_NAMES) {
        const columns = Object.keys(TABLES[t])
        const rows = source.query<Record<string, unknown>, []>(`SELECT ${columns.join(', ')} FROM ${t} ORDER BY ${ORDER[t] ?? 'id'}`)
        let batch: unknown[][] = []
        let done = 0
        progress(t, 0, totals[t])
        // row by row from the source (never the whole table in memory), batch by batch into the target
        for (const row of rows.iterate()) {
          batch.push(columns.map((c) => row[c]))
          if (batch.length === BATCH) {
            await into.insert(t, batch)
            done += batch.length
            batch = []
            progress(t, done, totals[t])
          }
        }
        await into.insert(t, batch)
        progress(t, done + batch.length, totals[t])
      }
    }, floors)
    const tables: CopyReport['tables'] = []
    for (const t of TABLE_NAMES) tables.push({ table: t, source: totals[t], target: await target.count(t) })
    return { tables, secretReplaced: targetSecret !== undefined && targetSecret !== (await target.secret()) }
  } finally {
    source.run('COMMIT')
  }
}
