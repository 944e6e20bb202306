import type { Database } from 'bun:sqlite'
import type { SQL, TransactionSQL } from 'bun'

/**
 * Bulk loading into an EMPTY database, for `conduit seed` and `conduit copy`,
 * on either backend: rows go in by the thousand with the counter triggers set
 * aside, every counter is recomputed from the rows at the end (many times
 * faster than row by row, and the same result), and id sequences are moved
 * past every id loaded (and past the source's highest id ever, so ids are
 * never reused after a copy either). All in one transaction: a failed load
 * leaves the database empty. The same transaction records in the change log
 * that everything changed, so every running process and instance answers its
 * next request from the loaded data, never from what it cached before.
 */

/** The tables, in an order that respects foreign keys, with their columns and PostgreSQL types. */
export const TABLES = {
  settings: { key: 'text', value: 'text' },
  users: {
    id: 'int4',
    username: 'text',
    username_key: 'text',
    email: 'text',
    password_hash: 'text',
    bio: 'text',
    image: 'text',
    token_version: 'int4',
    articles_count: 'int4',
    favorites_count: 'int4',
    created_at: 'int8',
    locked_at: 'int8',
    kept_token: 'text',
  },
  follows: { follower_id: 'int4', followee_id: 'int4' },
  tags: { id: 'int4', name: 'text', articles_count: 'int4' },
  articles: {
    id: 'int4',
    slug: 'text',
    title: 'text',
    description: 'text',
    body: 'text',
    author_id: 'int4',
    favorites_count: 'int4',
    created_at: 'int8',
    updated_at: 'int8',
  },
  article_tags: { tag_id: 'int4', article_id: 'int4' },
  favorites: { user_id: 'int4', article_id: 'int4' },
  comments: { id: 'int4', article_id: 'int4', author_id: 'int4', body: 'text', created_at: 'int8', updated_at: 'int8' },
  slug_counters: { base: 'text', next: 'int4' },
} as const
export type Table = keyof typeof TABLES
export const TABLE_NAMES = Object.keys(TABLES) as Table[]
/** Tables whose ids come from a sequence that must never hand out a used id. */
export const SEQUENCED = ['users', 'tags', 'articles', 'comments'] as const

export interface BulkTarget {
  /** Inserts rows (values in the table's column order); duplicates of link rows are ignored. */
  insert(table: Table, rows: unknown[][]): Promise<void>
  count(table: Table): Promise<number>
}

export interface BulkLoad {
  /** Runs `load` in one transaction, triggers aside; then recounts and moves sequences past `floors` (highest ids ever). */
  load(fn: (target: BulkTarget) => Promise<void>, floors?: Partial<Record<Table, number>>): Promise<void>
  count(table: Table): Promise<number>
  /** The signing secret kept in the database, if a server made one. */
  secret(): Promise<string | undefined>
}

const SECRET = "SELECT value FROM settings WHERE key = 'jwt_secret'"

const columns = (t: Table) => Object.keys(TABLES[t])

// ------------------------------------------------------------------ SQLite

/** Recomputes every trigger-kept counter from the rows (SQL both backends accept). */
const RECOUNT = [
  `UPDATE counters SET value = (SELECT count(*) FROM articles) WHERE name = 'articles'`,
  `UPDATE users SET articles_count = (SELECT count(*) FROM articles WHERE author_id = users.id),
                    favorites_count = (SELECT count(*) FROM favorites WHERE user_id = users.id)`,
  'UPDATE articles SET favorites_count = (SELECT count(*) FROM favorites WHERE article_id = articles.id)',
  'UPDATE tags SET articles_count = (SELECT count(*) FROM article_tags WHERE tag_id = tags.id)',
]

/**
 * The change log, as a bulk load uses it: `within` records inside the load's
 * transaction that everything changed; what it returns runs after the commit.
 */
export interface SqliteBulkLog {
  within(): () => void
}
export interface PostgresBulkLog {
  within(tx: TransactionSQL): Promise<() => void>
}

export function sqliteBulk(db: Database, log: SqliteBulkLog): BulkLoad {
  const count = async (t: Table) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n
  return {
    count,
    secret: async () => db.query<{ value: string }, []>(SECRET).get()?.value,
    async load(fn, floors = {}) {
      const triggers = db.query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").all()
      const statements = new Map(
        TABLE_NAMES.map((t) => [
          t,
          // settings are replaced (a copy brings the source's signing secret), link rows deduplicated
          db.prepare(
            `INSERT OR ${t === 'settings' ? 'REPLACE' : 'IGNORE'} INTO ${t} (${columns(t).join(', ')}) VALUES (${columns(t)
              .map(() => '?')
              .join(', ')})`,
          ),
        ]),
      )
      let committed: () => void
      db.run('BEGIN IMMEDIATE')
      try {
        for (const t of triggers) db.run(`DROP TRIGGER ${t.name}`)
        await fn({
          async insert(table, rows) {
            const s = statements.get(table)!
            for (const r of rows) s.run(...(r as never[]))
          },
          count,
        })
        // recounted before the triggers are back: the triggers that count rows changed by other writers stay out of it
        for (const sql of RECOUNT) db.run(sql)
        for (const t of triggers) db.run(t.sql)
        // AUTOINCREMENT tables: never below the source's highest id ever
        for (const [table, floor] of Object.entries(floors)) {
          db.query('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?').run(floor, table)
        }
        committed = log.within()
        db.run('COMMIT')
      } catch (e) {
        db.run('ROLLBACK')
        throw e
      }
      committed()
      db.run('ANALYZE')
    },
  }
}

// ------------------------------------------------------------------ PostgreSQL

export function postgresBulk(sql: SQL, log: PostgresBulkLog): BulkLoad {
  const count = async (t: Table) => Number((await sql.unsafe(`SELECT count(*) AS n FROM ${t}`))[0].n)
  const insertSql = (t: Table) => {
    const types = Object.values(TABLES[t])
    // settings are replaced (a copy brings the source's signing secret), link rows deduplicated
    const conflict = t === 'settings' ? 'ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value' : 'ON CONFLICT DO NOTHING'
    return `INSERT INTO ${t} (${columns(t).join(', ')})
      SELECT * FROM unnest(${types.map((type, i) => `$${i + 1}::${type}[]`).join(', ')}) ${conflict}`
  }
  return {
    count,
    secret: async () => (await sql.unsafe(SECRET))[0]?.value as string | undefined,
    async load(fn, floors = {}) {
      const committed = await sql.begin(async (tx: TransactionSQL) => {
        // a bulk load waits on its source between batches (a role's idle_in_transaction_session_timeout would end it)
        await tx`SET LOCAL idle_in_transaction_session_timeout = 0`
        // the counter triggers aside (the tables are ours: no superuser needed); every counter recomputed below
        for (const t of ['articles', 'article_tags', 'favorites']) await tx.unsafe(`ALTER TABLE ${t} DISABLE TRIGGER USER`)
        await fn({
          async insert(table, rows) {
            if (!rows.length) return
            const n = columns(table).length
            const arrays = Array.from({ length: n }, (_, c) => rows.map((r) => r[c] ?? null))
            await tx.unsafe(insertSql(table), arrays as never[])
          },
          count: async (t) => Number((await tx.unsafe(`SELECT count(*) AS n FROM ${t}`))[0].n),
        })
        for (const t of ['articles', 'article_tags', 'favorites']) await tx.unsafe(`ALTER TABLE ${t} ENABLE TRIGGER USER`)
        for (const s of RECOUNT) await tx.unsafe(s)
        for (const t of SEQUENCED) {
          const floor = floors[t] ?? 0
          await tx.unsafe(
            `SELECT setval(pg_get_serial_sequence('${t}', 'id'), greatest((SELECT coalesce(max(id), 0) FROM ${t}), $1::int, 1),
                           (SELECT count(*) > 0 FROM ${t}) OR $1::int > 0)`,
            [floor],
          )
        }
        return log.within(tx)
      })
      committed()
      // VACUUM too (our tables only): a bulk load leaves the visibility map empty (autovacuum may be off, or slow to come),
      // and every index-only scan then reads the table as well (an offset of 150,000: 157 ms, not 17)
      await sql.unsafe(`VACUUM (ANALYZE) ${TABLE_NAMES.join(', ')}`)
    },
  }
}
