import type { Database } from 'bun:sqlite'

/**
 * Invariants of the stored data that must hold after any sequence of
 * requests, concurrent or interrupted: every denormalised counter agrees with
 * the rows it counts, no row points at a missing row, and SQLite itself finds
 * the file sound. Each returns human-readable violations (empty = fine), so a
 * failure names the row.
 */
export function storageViolations(db: Database): string[] {
  const out: string[] = []
  const rows = (label: string, sql: string) => {
    for (const row of db.query(sql).all()) out.push(`${label}: ${JSON.stringify(row)}`)
  }

  const integrity = (db.query('PRAGMA integrity_check').all() as { integrity_check: string }[]).map((r) => r.integrity_check)
  if (integrity.join() !== 'ok') out.push(`integrity_check: ${integrity.join('; ')}`)
  rows('foreign_key_check', 'PRAGMA foreign_key_check')

  rows(
    'articles.favorites_count differs from its favorites rows',
    `SELECT a.slug, a.favorites_count AS counted, (SELECT count(*) FROM favorites f WHERE f.article_id = a.id) AS actual
     FROM articles a WHERE counted <> actual`,
  )
  rows(
    "counters['articles'] differs from count(*) of articles",
    `SELECT value AS counted, (SELECT count(*) FROM articles) AS actual FROM counters WHERE name = 'articles' AND counted <> actual`,
  )
  rows(
    'tags.articles_count differs from its article_tags rows',
    `SELECT t.name, t.articles_count AS counted, (SELECT count(*) FROM article_tags x WHERE x.tag_id = t.id) AS actual
     FROM tags t WHERE counted <> actual`,
  )
  rows(
    'users.articles_count differs from the articles they wrote',
    `SELECT u.username, u.articles_count AS counted, (SELECT count(*) FROM articles a WHERE a.author_id = u.id) AS actual
     FROM users u WHERE counted <> actual`,
  )
  rows(
    'users.favorites_count differs from their favorites rows',
    `SELECT u.username, u.favorites_count AS counted, (SELECT count(*) FROM favorites f WHERE f.user_id = u.id) AS actual
     FROM users u WHERE counted <> actual`,
  )

  rows('orphan favorites', 'SELECT * FROM favorites WHERE article_id NOT IN (SELECT id FROM articles) OR user_id NOT IN (SELECT id FROM users)')
  rows('orphan article_tags', 'SELECT * FROM article_tags WHERE article_id NOT IN (SELECT id FROM articles) OR tag_id NOT IN (SELECT id FROM tags)')
  rows('orphan comments', 'SELECT id, article_id, author_id FROM comments WHERE article_id NOT IN (SELECT id FROM articles) OR author_id NOT IN (SELECT id FROM users)')
  rows('orphan follows', 'SELECT * FROM follows WHERE follower_id NOT IN (SELECT id FROM users) OR followee_id NOT IN (SELECT id FROM users)')
  rows('articles of missing authors', 'SELECT slug FROM articles WHERE author_id NOT IN (SELECT id FROM users)')
  rows('duplicate slugs', 'SELECT slug, count(*) AS n FROM articles GROUP BY slug HAVING n > 1')
  rows('self-follows', 'SELECT * FROM follows WHERE follower_id = followee_id')
  return out
}

/** count(*) of every table: quick evidence for "nothing changed". */
export function rowCounts(db: Database): Record<string, number> {
  const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]
  return Object.fromEntries(tables.map(({ name }) => [name, (db.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]))
}

/**
 * Row counts and a hash of every row of every table (rows sorted, so the
 * order SQLite returns them in does not matter). Two equal snapshots mean no
 * stored data changed in between.
 */
export function snapshot(db: Database): { counts: Record<string, number>; hashes: Record<string, string> } {
  const counts = rowCounts(db)
  const hashes: Record<string, string> = {}
  for (const name of Object.keys(counts)) {
    const all = db.query(`SELECT * FROM "${name}"`).values() as unknown[][]
    const lines = all.map((r) => JSON.stringify(r, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).sort()
    hashes[name] = new Bun.CryptoHasher('sha256').update(lines.join('\n')).digest('hex')
  }
  return { counts, hashes }
}
