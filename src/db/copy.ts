import type { Database } from 'bun:sqlite'
import type { SQL, TransactionSQL } from 'bun'
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

/** A (migrated) database read for a copy, in one snapshot. */
export interface BulkSource {
  snapshot<T>(read: (s: SourceSnapshot) => Promise<T>): Promise<T>
}
export interface SourceSnapshot {
  count(t: Table): Promise<number>
  /** The highest id the table ever gave out: a deleted row's, above every row left, included. */
  highestId(t: (typeof SEQUENCED)[number]): Promise<number>
  /** The rows in key order, BATCH at a time, each its values in the table's column order. */
  batches(t: Table): AsyncIterable<unknown[][]>
}

const keyOf = (t: Table) => (ORDER[t] ?? 'id').split(', ')

/** A SQLite database as a source: one read transaction, row by row (never a whole table in memory). */
export function sqliteSource(db: Database): BulkSource {
  return {
    async snapshot(read) {
      db.run('BEGIN')
      try {
        return await read({
          count: async (t) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n,
          async highestId(t) {
            // AUTOINCREMENT keeps the highest id ever (also of deleted rows)
            const seq = db.query<{ seq: number }, [string]>('SELECT seq FROM sqlite_sequence WHERE name = ?').get(t)?.seq ?? 0
            return Math.max(seq, db.query<{ m: number | null }, []>(`SELECT max(id) AS m FROM ${t}`).get()?.m ?? 0)
          },
          async *batches(t) {
            const columns = Object.keys(TABLES[t])
            let batch: unknown[][] = []
            for (const row of db
              .query<Record<string, unknown>, []>(`SELECT ${columns.join(', ')} FROM ${t} ORDER BY ${keyOf(t).join(', ')}`)
              .iterate()) {
              batch.push(columns.map((c) => row[c]))
              if (batch.length === BATCH) {
                yield batch
                batch = []
              }
            }
            if (batch.length) yield batch
          },
        })
      } finally {
        db.run('COMMIT')
      }
    },
  }
}

/**
 * A PostgreSQL database as a source: one REPEATABLE READ, READ ONLY transaction, each table read
 * BATCH rows at a time after the last key read. int8 values (times) arrive as strings: numbers here.
 */
export function postgresSource(sql: SQL): BulkSource {
  return {
    snapshot: (read) =>
      sql.begin('isolation level repeatable read read only', async (tx: TransactionSQL) => {
        // idle while the target is written, longer than a role's idle_in_transaction_session_timeout allows
        await tx`SET LOCAL idle_in_transaction_session_timeout = 0`
        return read({
          count: async (t) => Number((await tx.unsafe(`SELECT count(*) AS n FROM ${t}`))[0].n),
          async highestId(t) {
            const [{ seq }] = await tx.unsafe(`SELECT pg_get_serial_sequence('${t}', 'id') AS seq`)
            const [s] = await tx.unsafe(`SELECT last_value, is_called FROM ${seq}`)
            const [m] = await tx.unsafe(`SELECT coalesce(max(id), 0) AS m FROM ${t}`)
            return Math.max(s.is_called ? Number(s.last_value) : 0, Number(m.m))
          },
          async *batches(t) {
            const columns = Object.keys(TABLES[t])
            const types = Object.values(TABLES[t]) as string[]
            const key = keyOf(t)
            let after: unknown[] | undefined
            for (;;) {
              const where = after ? `WHERE (${key.join(', ')}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})` : ''
              const rows = await tx.unsafe(
                `SELECT ${columns.join(', ')} FROM ${t} ${where} ORDER BY ${key.join(', ')} LIMIT ${BATCH}`,
                (after ?? []) as never[],
              )
              if (!rows.length) return
              const batch = [...rows].map((r: Record<string, unknown>) =>
                columns.map((c, i) => (types[i] === 'int8' && r[c] !== null ? Number(r[c]) : r[c])),
              )
              yield batch
              if (rows.length < BATCH) return
              const last = rows[rows.length - 1] as Record<string, unknown>
              after = key.map((k) => last[k])
            }
          },
        })
      }),
  }
}

/**
 * Copies a whole (migrated) database into an EMPTY database of the other
 * backend: every row of every table with its ids, the signing secret
 * (issued tokens keep working), counters recomputed, id sequences past the
 * source's highest ids ever. The source is read in one snapshot (a live
 * database can be copied). Ends by counting every table on both sides.
 */
export async function copyDatabase(
  source: BulkSource,
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

  return source.snapshot(async (from) => {
    const totals = {} as Record<Table, number>
    for (const t of TABLE_NAMES) totals[t] = await from.count(t)
    // the target's sequences start past the highest id ever
    const floors: Partial<Record<Table, number>> = {}
    for (const t of SEQUENCED) floors[t] = await from.highestId(t)
    await target.load(async (into) => {
      for (const t of TABLE_NAMES) {
        let done = 0
        progress(t, 0, totals[t])
        // batch by batch from the source into the target
        for await (const batch of from.batches(t)) {
          await into.insert(t, batch)
          done += batch.length
          progress(t, done, totals[t])
        }
      }
    }, floors)
    const tables: CopyReport['tables'] = []
    for (const t of TABLE_NAMES) tables.push({ table: t, source: totals[t], target: await target.count(t) })
    return { tables, secretReplaced: targetSecret !== undefined && targetSecret !== (await target.secret()) }
  })
}
