import { slugify } from '../articles/slug.ts'
import { mulberry32 } from '../random.ts'
import type { BulkLoad, Table } from '../db/bulk.ts'

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

/** Seed refuses a database that already has users. */
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

const BATCH = 5000

/**
 * Fills an EMPTY database with demo data, on either backend, through the bulk
 * loader (one transaction, counters recomputed at the end). The data depends
 * only on the options: fixed times and a seeded generator give identical data
 * for identical options. Article ids grow with created_at, as the service
 * itself guarantees.
 */
export async function seedDatabase(bulk: BulkLoad, o: SeedOptions): Promise<Record<string, number>> {
  const existing = await bulk.count('users')
  if (existing > 0) throw new NotEmptyError(existing)
  const rnd = random(o.seed)
  const log = o.onProgress ?? (() => {})
  // spread over 2025, oldest first (articles created later through the API are newer)
  const start = Date.UTC(2025, 0, 1)
  const step = Math.max(1, Math.floor((Date.UTC(2026, 0, 1) - start) / Math.max(1, o.articles)))

  await bulk.load(async (target) => {
    let batch: unknown[][] = []
    let table: Table = 'users'
    const add = async (t: Table, row: unknown[]) => {
      if (t !== table && batch.length) await flush()
      table = t
      batch.push(row)
      if (batch.length >= BATCH) await flush()
    }
    const flush = async () => {
      await target.insert(table, batch)
      batch = []
    }

    for (let i = 1; i <= o.users; i++) {
      await add('users', [
        i,
        `user${i}`,
        `user${i}`,
        `user${i}@example.com`,
        o.passwordHash,
        i % 3 ? `I am user ${i}.` : null,
        null,
        0,
        0,
        0,
        start,
        null,
        null,
      ])
    }
    log(`users: ${o.users}`)
    for (let i = 1; i <= o.users; i++) {
      for (let k = 0; k < o.follows; k++) {
        const j = 1 + rnd.int(o.users)
        if (j !== i) await add('follows', [i, j])
      }
    }
    log('follows done')
    for (let i = 1; i <= o.tags; i++) await add('tags', [i, `${rnd.pick(WORDS)}-${i}`, 0])
    // articles and their tag links, interleaved in the generator's order, loaded table by table
    const links: unknown[][] = []
    for (let id = 1; id <= o.articles; id++) {
      const words = Array.from({ length: 3 + rnd.int(5) }, () => rnd.pick(WORDS))
      const title = `${words.join(' ')} ${id}`
      const body = Array.from({ length: 40 + rnd.int(60) }, () => rnd.pick(WORDS)).join(' ')
      const t = start + id * step
      await add('articles', [id, slugify(title), title, `About ${words[0]} and ${words[1]}`, body, 1 + rnd.int(o.users), 0, t, t])
      const n = 1 + rnd.int(5)
      for (let k = 0; k < n; k++) links.push([1 + rnd.int(o.tags), id])
      if (links.length >= BATCH * 4) {
        await flush()
        await target.insert('article_tags', links.splice(0))
      }
      if (id % 100_000 === 0) log(`articles: ${id}`)
    }
    await flush()
    await target.insert('article_tags', links.splice(0))
    const favorites = Math.round(o.articles * o.favoritesPerArticle)
    for (let k = 0; k < favorites; k++) await add('favorites', [1 + rnd.int(o.users), 1 + rnd.int(o.articles)])
    log(`favorites: ${favorites}`)
    const comments = Math.round(o.articles * o.commentsPerArticle)
    for (let k = 1; k <= comments; k++) {
      const article = 1 + rnd.int(o.articles)
      const t = start + article * step + 1 + rnd.int(step)
      await add('comments', [k, article, 1 + rnd.int(o.users), `Nice ${rnd.pick(WORDS)}!`, t, t])
    }
    await flush()
    log(`comments: ${comments}`)
  })
  const counts: Record<string, number> = {}
  for (const t of ['users', 'articles', 'article_tags', 'favorites', 'follows', 'comments'] as const) counts[t] = await bulk.count(t)
  return counts
}
