import type { QueryDb } from '../support/backend.ts'

/**
 * Invariants of the stored data that must hold after any sequence of
 * requests, concurrent or interrupted: every denormalised counter agrees with
 * the rows it counts, no row points at a missing row, and (SQLite) the file
 * is sound. Each returns human-readable violations (empty = fine), so a
 * failure names the row. The same SQL runs on both backends.
 */
export async function storageViolations(db: QueryDb): Promise<string[]> {
  const out: string[] = []
  const rows = async (label: string, sql: string) => {
    for (const row of await db.all(sql)) out.push(`${label}: ${JSON.stringify(row)}`)
  }
  /** rows of `sql` (columns counted, actual) where the two disagree */
  const differ = (label: string, sql: string) => rows(label, `SELECT * FROM (${sql}) x WHERE counted <> actual`)

  if (db.backend === 'sqlite') {
    const integrity = (await db.all<{ integrity_check: string }>('PRAGMA integrity_check')).map((r) => r.integrity_check)
    if (integrity.join() !== 'ok') out.push(`integrity_check: ${integrity.join('; ')}`)
    await rows('foreign_key_check', 'PRAGMA foreign_key_check')
  }

  await differ(
    'articles.favorites_count differs from its favorites rows',
    `SELECT a.slug, a.favorites_count AS counted, (SELECT CAST(count(*) AS INTEGER) FROM favorites f WHERE f.article_id = a.id) AS actual
     FROM articles a`,
  )
  await differ(
    "counters['articles'] differs from count(*) of articles",
    `SELECT value AS counted, (SELECT CAST(count(*) AS INTEGER) FROM articles) AS actual FROM counters WHERE name = 'articles'`,
  )
  await differ(
    'tags.articles_count differs from its article_tags rows',
    `SELECT t.name, t.articles_count AS counted, (SELECT CAST(count(*) AS INTEGER) FROM article_tags x WHERE x.tag_id = t.id) AS actual
     FROM tags t`,
  )
  await differ(
    'users.articles_count differs from the articles they wrote',
    `SELECT u.username, u.articles_count AS counted, (SELECT CAST(count(*) AS INTEGER) FROM articles a WHERE a.author_id = u.id) AS actual
     FROM users u`,
  )
  await differ(
    'users.favorites_count differs from their favorites rows',
    `SELECT u.username, u.favorites_count AS counted, (SELECT CAST(count(*) AS INTEGER) FROM favorites f WHERE f.user_id = u.id) AS actual
     FROM users u`,
  )

  await rows(
    'orphan favorites',
    'SELECT * FROM favorites WHERE article_id NOT IN (SELECT id FROM articles) OR user_id NOT IN (SELECT id FROM users)',
  )
  await rows(
    'orphan article_tags',
    'SELECT * FROM article_tags WHERE article_id NOT IN (SELECT id FROM articles) OR tag_id NOT IN (SELECT id FROM tags)',
  )
  await rows(
    'orphan comments',
    'SELECT id, article_id, author_id FROM comments WHERE article_id NOT IN (SELECT id FROM articles) OR author_id NOT IN (SELECT id FROM users)',
  )
  await rows(
    'orphan follows',
    'SELECT * FROM follows WHERE follower_id NOT IN (SELECT id FROM users) OR followee_id NOT IN (SELECT id FROM users)',
  )
  await rows('articles of missing authors', 'SELECT slug FROM articles WHERE author_id NOT IN (SELECT id FROM users)')
  await rows('duplicate slugs', 'SELECT slug, CAST(count(*) AS INTEGER) AS n FROM articles GROUP BY slug HAVING count(*) > 1')
  await rows(
    'duplicate username keys',
    'SELECT username_key, CAST(count(*) AS INTEGER) AS n FROM users GROUP BY username_key HAVING count(*) > 1',
  )
  await rows('self-follows', 'SELECT * FROM follows WHERE follower_id = followee_id')
  return out
}

/** The data tables (not the change log or the throttle, which every request may touch). */
async function tables(db: QueryDb): Promise<string[]> {
  const sql =
    db.backend === 'sqlite'
      ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
      : 'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename'
  return (await db.all<{ name: string }>(sql)).map((r) => r.name).filter((n) => n !== 'changes' && n !== 'throttle')
}

/** The data tables of a database, read once: the fuzz test takes a snapshot before and after each request. */
const tableLists = new WeakMap<QueryDb, Promise<string[]>>()
const tablesOf = (db: QueryDb) => {
  let names = tableLists.get(db)
  if (!names) tableLists.set(db, (names = tables(db)))
  return names
}

/** count(*) of every table: quick evidence for "nothing changed". */
export async function rowCounts(db: QueryDb): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const name of await tablesOf(db)) out[name] = await db.count(`SELECT count(*) FROM "${name}"`)
  return out
}

/**
 * Row counts and a hash of every row of every table (rows sorted, so the
 * order the database returns them in does not matter). Two equal snapshots
 * mean no stored data changed in between. PostgreSQL hashes in one statement
 * (a round trip per table made the fuzz test wait on the network for most of
 * its minute); SQLite reads the rows in process.
 */
export async function snapshot(db: QueryDb): Promise<{ counts: Record<string, number>; hashes: Record<string, string> }> {
  const names = await tablesOf(db)
  const counts: Record<string, number> = {}
  const hashes: Record<string, string> = {}
  if (db.backend === 'postgres') {
    const columns = names.map(
      (n, i) =>
        `(SELECT count(*) FROM "${n}") AS c${i}, ` +
        `(SELECT md5(coalesce(string_agg(x::text, E'\\n' ORDER BY x::text), '')) FROM "${n}" x) AS h${i}`,
    )
    const row = (await db.get<Record<string, string | number>>(`SELECT ${columns.join(', ')}`))!
    names.forEach((n, i) => {
      counts[n] = Number(row[`c${i}`])
      hashes[n] = String(row[`h${i}`])
    })
    return { counts, hashes }
  }
  for (const name of names) {
    const all = await db.all(`SELECT * FROM "${name}"`)
    counts[name] = all.length
    const lines = all
      .map((r) => JSON.stringify(Object.values(r), (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v)))
      .sort()
    hashes[name] = new Bun.CryptoHasher('sha256').update(lines.join('\n')).digest('hex')
  }
  return { counts, hashes }
}
