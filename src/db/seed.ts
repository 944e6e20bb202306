import type { Database } from 'bun:sqlite'
import { slugify } from '../articles/slug.ts'
import { mulberry32 } from '../random.ts'

export interface SeedOptions {
  users: number
  articles: number
  tags: number
  /** follows per user */
  follows: number
  /** favorites per article, on average */
  favoritesPerArticle: number
  /** comments per article, on average */
  commentsPerArticle: number
  seed: number
  /** argon2id hash that every seeded user gets (hashing 1,000 passwords would take a minute) */
  passwordHash: string
  onProgress?: (message: string) => void
}

export const SEED_PASSWORD = 'password123'

/** seedDatabase only fills an empty database. */
export class NotEmptyError extends Error {
  constructor(readonly users: number) {
    super(`seed needs an empty database (it already has ${users} users)`)
  }
}

function random(seed: number) {
  const next = mulberry32(seed)
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]! }
}

const WORDS = (
  'the quick brown fox jumps over lazy dog river mountain code review bun sqlite fast binary server ' +
  'dragon training journey ocean light shadow garden winter summer city night morning coffee story ' +
  'machine learning design pattern music forest engine rocket planet signal bridge paper window'
).split(' ')

/**
 * Fills an EMPTY database with demo data straight through SQL, in one
 * transaction. Triggers are set aside while loading and every counter is
 * recomputed from the rows at the end (recountAll), which is many times faster
 * than maintaining them row by row and gives the same result.
 * Article ids grow with created_at, as the service itself guarantees.
 */
export function seedDatabase(db: Database, o: SeedOptions): Record<string, number> {
  const users = db.query<{ n: number }, []>('SELECT count(*) AS n FROM users').get()!.n
  if (users > 0) throw new NotEmptyError(users)
  const rnd = random(o.seed)
  const log = o.onProgress ?? (() => {})
  const triggers = db.query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger'").all()
  // spread over 2025, oldest first: fixed times keep a seed's data identical
  // from run to run (articles created later through the API are newer)
  const start = Date.UTC(2025, 0, 1)
  const step = Math.max(1, Math.floor((Date.UTC(2026, 0, 1) - start) / Math.max(1, o.articles)))

  const counts: Record<string, number> = {}
  db.transaction(() => {
    for (const t of triggers) db.run(`DROP TRIGGER ${t.name}`)

    const insertUser = db.prepare(
      'INSERT INTO users (id, username, username_key, email, password_hash, bio, image, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    for (let i = 1; i <= o.users; i++) {
      insertUser.run(i, `user${i}`, `user${i}`, `user${i}@example.com`, o.passwordHash, i % 3 ? `I am user ${i}.` : null, null, start)
    }
    counts.users = o.users
    log(`users: ${o.users}`)

    const follow = db.prepare('INSERT OR IGNORE INTO follows (follower_id, followee_id) VALUES (?, ?)')
    for (let i = 1; i <= o.users; i++) {
      for (let k = 0; k < o.follows; k++) {
        const j = 1 + rnd.int(o.users)
        if (j !== i) follow.run(i, j)
      }
    }
    log('follows done')

    const insertTag = db.prepare('INSERT INTO tags (id, name) VALUES (?, ?)')
    for (let i = 1; i <= o.tags; i++) insertTag.run(i, `${rnd.pick(WORDS)}-${i}`)

    const insertArticle = db.prepare(
      'INSERT INTO articles (id, slug, title, description, body, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    const link = db.prepare('INSERT OR IGNORE INTO article_tags (tag_id, article_id) VALUES (?, ?)')
    for (let id = 1; id <= o.articles; id++) {
      const words = Array.from({ length: 3 + rnd.int(5) }, () => rnd.pick(WORDS))
      const title = `${words.join(' ')} ${id}`
      const body = Array.from({ length: 40 + rnd.int(60) }, () => rnd.pick(WORDS)).join(' ')
      const t = start + id * step
      insertArticle.run(id, slugify(title), title, `About ${words[0]} and ${words[1]}`, body, 1 + rnd.int(o.users), t, t)
      const n = 1 + rnd.int(5)
      for (let k = 0; k < n; k++) link.run(1 + rnd.int(o.tags), id)
      if (id % 100_000 === 0) log(`articles: ${id}`)
    }

    const favorite = db.prepare('INSERT OR IGNORE INTO favorites (user_id, article_id) VALUES (?, ?)')
    const favorites = Math.round(o.articles * o.favoritesPerArticle)
    for (let k = 0; k < favorites; k++) favorite.run(1 + rnd.int(o.users), 1 + rnd.int(o.articles))
    log(`favorites: ${favorites}`)

    const comment = db.prepare(
      'INSERT INTO comments (article_id, author_id, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    const comments = Math.round(o.articles * o.commentsPerArticle)
    for (let k = 0; k < comments; k++) {
      const article = 1 + rnd.int(o.articles)
      const t = start + article * step + 1 + rnd.int(step)
      comment.run(article, 1 + rnd.int(o.users), `Nice ${rnd.pick(WORDS)}!`, t, t)
    }
    log(`comments: ${comments}`)

    for (const t of triggers) db.run(t.sql)
    recountAll(db)
  }).immediate()
  db.run('ANALYZE')
  for (const [table, n] of Object.entries({ articles: 0, article_tags: 0, favorites: 0, follows: 0, comments: 0 })) {
    counts[table] = n + db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
  }
  return counts
}

/** Recomputes every trigger-kept counter from the rows (after a bulk load; also a repair tool). */
export function recountAll(db: Database): void {
  db.run(`UPDATE counters SET value = (SELECT count(*) FROM articles) WHERE name = 'articles'`)
  db.run(`UPDATE users SET
            articles_count = (SELECT count(*) FROM articles WHERE author_id = users.id),
            favorites_count = (SELECT count(*) FROM favorites WHERE user_id = users.id)`)
  db.run('UPDATE articles SET favorites_count = (SELECT count(*) FROM favorites WHERE article_id = articles.id)')
  db.run('UPDATE tags SET articles_count = (SELECT count(*) FROM article_tags WHERE tag_id = tags.id)')
}
