import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type ApiResponse, api, installBinary, type Server, startServer, tempDir, useBinary, withTimeout } from '../e2e/support.ts'
import { storageViolations } from './invariants.ts'
import { binaryDatabase, onPostgres, type QueryDb, sqliteQueries } from '../support/backend.ts'
import { mulberry32 } from '../../src/random.ts'

/**
 * Crash safety of the compiled binary: "an acknowledged write survives a
 * crash of the process".
 *
 * Several async workers write concurrently (registrations, articles with
 * tags, updates, deletes, favorites, comments, follows, profile updates) and
 * record every write the server acknowledged with a 2xx, with what it wrote.
 * At a random moment the server is SIGKILLed while writes are in flight.
 * Then, on a copy of the database file (the server is dead), the test checks
 * that every acknowledged write is there and intact, that nothing else is,
 * and that every counter agrees with its rows. The writes that were in flight
 * at the kill may have landed or not (both are allowed, but nothing in
 * between); what they did is then taken from the file. The server restarts
 * on the same file and must serve exactly that state over HTTP. Three
 * kill/restart cycles, then a clean shutdown and a last check.
 *
 * The schedule of operations and kill moments comes from a seeded generator:
 * the seed is printed; CRASH_SEED=<n> replays the same choices (the timing of
 * a kill against the requests in flight is the machine's).
 */

const binary = useBinary()

const SEED = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : Math.floor(Math.random() * 2 ** 31)
const CYCLES = 3
const WORKERS = 6
const TAGS = ['dragons', 'training', 'wal', 'sqlite', 'ünïcode', '日本', 'x-y', 'zebra']

function rng(seed: number) {
  const next = mulberry32(seed)
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(items: readonly T[]): T | undefined => (items.length ? items[Math.floor(next() * items.length)] : undefined),
    chance: (p: number) => next() < p,
  }
}
type Rng = ReturnType<typeof rng>

// ------------------------------------------------------------------ the model of acknowledged writes

interface MUser {
  username: string
  email: string
  password: string
  token: string | undefined
  bio: string | null
  image: string | null
}
interface ArticleFields {
  title: string
  description: string
  body: string
  tagList: string[]
  author: string
}
interface MArticle extends ArticleFields {
  slug: string
  live: boolean
}
interface MComment {
  id: number
  slug: string
  body: string
  author: string
  live: boolean
}

type Pending =
  | { kind: 'register'; user: MUser }
  | { kind: 'updateUser'; username: string; bio: string | null; image: string | null }
  | { kind: 'createArticle'; fields: ArticleFields }
  | { kind: 'updateArticle'; slug: string; description: string; body: string; tagList: string[] }
  | { kind: 'deleteArticle'; slug: string }
  | { kind: 'favorite'; user: string; slug: string; on: boolean }
  | { kind: 'follow'; follower: string; followee: string; on: boolean }
  | { kind: 'comment'; slug: string; body: string; author: string }
  | { kind: 'deleteComment'; id: number }

const pairKey = (a: string, b: string) => `${a}\n${b}`

class Model {
  users = new Map<string, MUser>()
  articles = new Map<string, MArticle>()
  comments = new Map<number, MComment>()
  /** `${username}\n${slug}` → favorited; only the user's own worker writes a key */
  favorites = new Map<string, boolean>()
  /** `${follower}\n${followee}` → following */
  follows = new Map<string, boolean>()
  /** slugs whose DELETE was sent and not yet answered */
  deleting = new Set<string>()
  acknowledged = 0

  liveArticles = () => [...this.articles.values()].filter((a) => a.live)
  /** A deleted article takes its comments and favorites with it. */
  deleteArticle(slug: string) {
    const a = this.articles.get(slug)
    if (a) a.live = false
    for (const c of this.comments.values()) if (c.slug === slug) c.live = false
    for (const k of [...this.favorites.keys()]) if (k.endsWith(`\n${slug}`)) this.favorites.delete(k)
  }
}

/** What is actually stored, read from the database file or through the API. */
interface Actual {
  users: Map<string, { email: string; bio: string | null; image: string | null }>
  articles: Map<string, ArticleFields & { favoritesCount: number }>
  comments: Map<number, { slug: string; body: string; author: string }>
  favorites: Set<string>
  follows: Set<string>
}

const sortedTags = (tags: string[]) => [...new Set(tags)].sort()
/** JSON with object keys sorted: equal values give equal text whatever the key order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  )
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b)

// ------------------------------------------------------------------ workers

interface Ctx {
  model: Model
  base: string
  stopped: boolean
  /** non-2xx answers the operation did not allow, and 5xx */
  unexpected: string[]
  /** operations whose request was in flight when the server died */
  pending: Pending[]
  cycle: number
}

/** One request; null when the connection failed (the server was killed). */
async function send(ctx: Ctx, method: string, path: string, token: string | undefined, body?: unknown): Promise<ApiResponse | null> {
  try {
    return await api(ctx.base, method, path, { token, body, timeoutMs: 15_000 })
  } catch (e) {
    if (!ctx.stopped) ctx.unexpected.push(`${method} ${path}: request failed while the server was up: ${(e as Error).message}`)
    return null
  }
}

function expectStatus(ctx: Ctx, res: ApiResponse, what: string, allowed: number[]): boolean {
  if (allowed.includes(res.status)) return res.status < 300
  ctx.unexpected.push(`${what}: ${res.status} ${res.text.slice(0, 300)}`)
  return false
}

/** 404 is expected for another worker's article only when that article is (being) deleted. */
const goneAllowed = (ctx: Ctx, slug: string) => (ctx.model.deleting.has(slug) || ctx.model.articles.get(slug)?.live === false ? [404] : [])

let serial = 0
const text = (r: Rng, label: string, repeat = 40) => {
  const filler = 'lorem ipsum naïve café 日本語 🐉 '.repeat(r.int(0, repeat))
  return `${label} #${++serial} ${filler}`.trim()
}

async function worker(ctx: Ctx, w: number, r: Rng, mine: { users: string[]; articles: string[]; comments: number[] }) {
  const m = ctx.model
  while (!ctx.stopped) {
    const me = m.users.get(r.pick(mine.users) ?? '')
    if (!me || mine.users.length < 2 || r.chance(0.06)) {
      // register
      const username = `c${ctx.cycle}w${w}u${++serial}x${SEED % 1000}`
      const user: MUser = {
        username,
        email: `${username}@Example.com`.toLowerCase(),
        password: `pw-${username}-long`,
        token: undefined,
        bio: null,
        image: null,
      }
      const op: Pending = { kind: 'register', user }
      const res = await send(ctx, 'POST', '/api/users', undefined, {
        user: { username, email: `${username}@Example.com`, password: user.password },
      })
      if (!res) {
        ctx.pending.push(op)
        continue
      }
      if (expectStatus(ctx, res, `register ${username}`, [201])) {
        user.token = res.body.user.token
        m.users.set(username, user)
        mine.users.push(username)
        m.acknowledged++
      }
      continue
    }
    const roll = r.next()
    if (roll < 0.2) {
      // create an article with tags
      const fields: ArticleFields = {
        title: `Crash ${SEED} c${ctx.cycle} w${w} n${++serial} Ünïcode`,
        description: text(r, 'description', 20),
        body: text(r, 'body'),
        tagList: Array.from({ length: r.int(0, 4) }, () => r.pick(TAGS)!),
        author: me.username,
      }
      const res = await send(ctx, 'POST', '/api/articles', me.token, { article: fields })
      if (!res) {
        ctx.pending.push({ kind: 'createArticle', fields })
        continue
      }
      if (expectStatus(ctx, res, `create "${fields.title}"`, [201])) {
        const slug = res.body.article.slug as string
        if (!same(res.body.article.tagList, sortedTags(fields.tagList)))
          ctx.unexpected.push(`create ${slug}: tagList ${JSON.stringify(res.body.article.tagList)}`)
        m.articles.set(slug, { ...fields, tagList: sortedTags(fields.tagList), slug, live: true })
        mine.articles.push(slug)
        m.acknowledged++
      }
    } else if (roll < 0.45) {
      // favorite or unfavorite any live article
      const a = r.pick(m.liveArticles())
      if (!a) continue
      const key = pairKey(me.username, a.slug)
      const on = !m.favorites.get(key) || r.chance(0.2)
      const res = await send(ctx, on ? 'POST' : 'DELETE', `/api/articles/${encodeURIComponent(a.slug)}/favorite`, me.token)
      if (!res) {
        ctx.pending.push({ kind: 'favorite', user: me.username, slug: a.slug, on })
        continue
      }
      if (expectStatus(ctx, res, `${on ? '' : 'un'}favorite ${a.slug}`, [200, ...goneAllowed(ctx, a.slug)])) {
        if (res.body.article.favorited !== on)
          ctx.unexpected.push(`favorite ${a.slug}: favorited ${res.body.article.favorited}, expected ${on}`)
        // an answer that overtook the delete of its article says nothing lasting
        if (m.articles.get(a.slug)?.live) m.favorites.set(key, on)
        m.acknowledged++
      }
    } else if (roll < 0.6) {
      // comment on any live article
      const a = r.pick(m.liveArticles())
      if (!a) continue
      const body = text(r, `comment by ${me.username}`)
      const res = await send(ctx, 'POST', `/api/articles/${encodeURIComponent(a.slug)}/comments`, me.token, { comment: { body } })
      if (!res) {
        ctx.pending.push({ kind: 'comment', slug: a.slug, body, author: me.username })
        continue
      }
      if (expectStatus(ctx, res, `comment on ${a.slug}`, [201, ...goneAllowed(ctx, a.slug)])) {
        const id = res.body.comment.id as number
        m.comments.set(id, { id, slug: a.slug, body, author: me.username, live: m.articles.get(a.slug)?.live === true })
        mine.comments.push(id)
        m.acknowledged++
      }
    } else if (roll < 0.65) {
      // delete one of my comments
      const id = r.pick(mine.comments.filter((c) => m.comments.get(c)?.live && m.comments.get(c)!.author === me.username))
      const c = id === undefined ? undefined : m.comments.get(id)
      if (!c) continue
      const res = await send(ctx, 'DELETE', `/api/articles/${encodeURIComponent(c.slug)}/comments/${c.id}`, me.token)
      if (!res) {
        ctx.pending.push({ kind: 'deleteComment', id: c.id })
        continue
      }
      if (expectStatus(ctx, res, `delete comment ${c.id}`, [204, ...goneAllowed(ctx, c.slug)])) {
        c.live = false
        m.acknowledged++
      }
    } else if (roll < 0.78) {
      // follow or unfollow another user
      const other = r.pick([...m.users.keys()].filter((u) => u !== me.username))
      if (!other) continue
      const key = pairKey(me.username, other)
      const on = !m.follows.get(key) || r.chance(0.2)
      const res = await send(ctx, on ? 'POST' : 'DELETE', `/api/profiles/${encodeURIComponent(other)}/follow`, me.token)
      if (!res) {
        ctx.pending.push({ kind: 'follow', follower: me.username, followee: other, on })
        continue
      }
      if (expectStatus(ctx, res, `${on ? '' : 'un'}follow ${other}`, [200])) {
        if (res.body.profile.following !== on) ctx.unexpected.push(`follow ${other}: following ${res.body.profile.following}`)
        m.follows.set(key, on)
        m.acknowledged++
      }
    } else if (roll < 0.87) {
      // update my profile
      const bio = r.chance(0.2) ? null : text(r, `bio of ${me.username}`)
      const image = r.chance(0.3) ? null : `https://img.example.com/${me.username}/${++serial}.png`
      const res = await send(ctx, 'PUT', '/api/user', me.token, { user: { bio, image } })
      if (!res) {
        ctx.pending.push({ kind: 'updateUser', username: me.username, bio, image })
        continue
      }
      if (expectStatus(ctx, res, `update user ${me.username}`, [200])) {
        me.bio = bio
        me.image = image
        m.acknowledged++
      }
    } else if (roll < 0.96) {
      // update one of my articles (same title: the slug stays)
      const slug = r.pick(mine.articles.filter((s) => m.articles.get(s)?.live && m.articles.get(s)!.author === me.username))
      const a = slug === undefined ? undefined : m.articles.get(slug)
      if (!a) continue
      const change = {
        description: text(r, 'new description', 20),
        body: text(r, 'new body'),
        tagList: sortedTags(Array.from({ length: r.int(0, 3) }, () => r.pick(TAGS)!)),
      }
      const res = await send(ctx, 'PUT', `/api/articles/${encodeURIComponent(a.slug)}`, me.token, { article: change })
      if (!res) {
        ctx.pending.push({ kind: 'updateArticle', slug: a.slug, ...change })
        continue
      }
      if (expectStatus(ctx, res, `update ${a.slug}`, [200])) {
        Object.assign(a, change)
        m.acknowledged++
      }
    } else {
      // delete one of my articles
      const slug = r.pick(mine.articles.filter((s) => m.articles.get(s)?.live && m.articles.get(s)!.author === me.username))
      if (!slug) continue
      m.deleting.add(slug)
      const res = await send(ctx, 'DELETE', `/api/articles/${encodeURIComponent(slug)}`, me.token)
      if (!res) {
        ctx.pending.push({ kind: 'deleteArticle', slug })
        continue
      }
      m.deleting.delete(slug)
      if (expectStatus(ctx, res, `delete ${slug}`, [204])) {
        m.deleteArticle(slug)
        m.acknowledged++
      }
    }
  }
}

// ------------------------------------------------------------------ reading what is stored

/** The stored state, read from the database itself (the server is dead, or never asked). */
async function readDb(db: QueryDb): Promise<Actual> {
  const actual: Actual = { users: new Map(), articles: new Map(), comments: new Map(), favorites: new Set(), follows: new Set() }
  for (const u of await db.all<{ username: string; email: string; bio: string | null; image: string | null }>(
    'SELECT username, email, bio, image FROM users',
  )) {
    actual.users.set(u.username, { email: u.email, bio: u.bio, image: u.image })
  }
  const tags = new Map<number, string[]>()
  for (const t of await db.all<{ article_id: number; name: string }>(
    'SELECT x.article_id, t.name FROM article_tags x JOIN tags t ON t.id = x.tag_id',
  )) {
    tags.set(t.article_id, [...(tags.get(t.article_id) ?? []), t.name])
  }
  const articles = await db.all<Omit<ArticleFields, 'tagList'> & { id: number; slug: string; favoritesCount: number }>(
    `SELECT a.id, a.slug, a.title, a.description, a.body, u.username AS author, a.favorites_count AS "favoritesCount"
     FROM articles a JOIN users u ON u.id = a.author_id`,
  )
  for (const { id, slug, ...rest } of articles) actual.articles.set(slug, { ...rest, tagList: sortedTags(tags.get(id) ?? []) })
  for (const c of await db.all<{ id: number; slug: string; body: string; author: string }>(
    'SELECT c.id, a.slug, c.body, u.username AS author FROM comments c JOIN articles a ON a.id = c.article_id JOIN users u ON u.id = c.author_id',
  )) {
    actual.comments.set(c.id, { slug: c.slug, body: c.body, author: c.author })
  }
  for (const f of await db.all<{ username: string; slug: string }>(
    'SELECT u.username, a.slug FROM favorites f JOIN users u ON u.id = f.user_id JOIN articles a ON a.id = f.article_id',
  )) {
    actual.favorites.add(pairKey(f.username, f.slug))
  }
  for (const f of await db.all<{ follower: string; followee: string }>(
    'SELECT a.username AS follower, b.username AS followee FROM follows f JOIN users a ON a.id = f.follower_id JOIN users b ON b.id = f.followee_id',
  )) {
    actual.follows.add(pairKey(f.follower, f.followee))
  }
  return actual
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    }),
  )
  return out
}

/**
 * The stored state as the API shows it, plus every consistency check the API
 * allows: list counts against the items listed, favoritesCount against the
 * favorited lists, per-tag and per-author counts against the articles.
 */
async function readApi(base: string, model: Model, problems: string[]): Promise<Actual> {
  const get = async (path: string, token?: string) => {
    const res = await api(base, 'GET', path, { token })
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 300)}`)
    return res.body
  }
  /** Every item of a paged list, checking articlesCount on every page. */
  const all = async (query: string, token?: string) => {
    const items: any[] = []
    let count: number | undefined
    for (let offset = 0; ; offset += 100) {
      const page = await get(`/api/articles?${query}${query ? '&' : ''}limit=100&offset=${offset}`, token)
      if (count !== undefined && page.articlesCount !== count)
        problems.push(`${query}: articlesCount moved from ${count} to ${page.articlesCount} between pages`)
      count = page.articlesCount
      items.push(...page.articles)
      if (page.articles.length < 100) break
    }
    if (items.length !== count) problems.push(`GET /api/articles?${query}: articlesCount ${count} but ${items.length} articles listed`)
    return items
  }

  const actual: Actual = { users: new Map(), articles: new Map(), comments: new Map(), favorites: new Set(), follows: new Set() }
  const users = [...model.users.values()]
  await mapLimit(users, 6, async (u) => {
    if (!u.token) {
      const res = await api(base, 'POST', '/api/users/login', { body: { user: { email: u.email, password: u.password } } })
      if (res.status !== 200) throw new Error(`login ${u.email}: ${res.status} ${res.text}`)
      u.token = res.body.user.token
    }
    const me = (await get('/api/user', u.token)).user
    actual.users.set(me.username, { email: me.email, bio: me.bio, image: me.image })
  })

  const listed = await all('')
  if (new Set(listed.map((a) => a.slug)).size !== listed.length) problems.push('GET /api/articles lists an article twice')
  await mapLimit(listed, 8, async (item) => {
    const { article } = await get(`/api/articles/${encodeURIComponent(item.slug)}`)
    const { body: _body, ...withoutBody } = article
    if (!same(withoutBody, item))
      problems.push(`list item of ${item.slug} differs from the article: ${JSON.stringify(item)} vs ${JSON.stringify(withoutBody)}`)
    actual.articles.set(article.slug, {
      title: article.title,
      description: article.description,
      body: article.body,
      tagList: article.tagList,
      author: article.author.username,
      favoritesCount: article.favoritesCount,
    })
    const { comments } = await get(`/api/articles/${encodeURIComponent(item.slug)}/comments`)
    for (const c of comments) actual.comments.set(c.id, { slug: article.slug, body: c.body, author: c.author.username })
  })

  const favoritedBy = new Map<string, number>()
  await mapLimit(users, 6, async (u) => {
    const favorited = await all(`favorited=${encodeURIComponent(u.username)}`)
    for (const a of favorited) {
      actual.favorites.add(pairKey(u.username, a.slug))
      favoritedBy.set(a.slug, (favoritedBy.get(a.slug) ?? 0) + 1)
    }
    const { articlesCount } = await get(`/api/articles?author=${encodeURIComponent(u.username)}&limit=1`)
    const written = [...actual.articles.values()].filter((a) => a.author === u.username).length
    if (articlesCount !== written)
      problems.push(`author=${u.username}: articlesCount ${articlesCount}, but ${written} of their articles are listed`)
  })
  for (const [slug, a] of actual.articles) {
    if (a.favoritesCount !== (favoritedBy.get(slug) ?? 0))
      problems.push(`${slug}: favoritesCount ${a.favoritesCount}, but ${favoritedBy.get(slug) ?? 0} users list it as favorited`)
  }

  await mapLimit([...model.follows.keys()], 8, async (key) => {
    const [follower, followee] = key.split('\n') as [string, string]
    const { profile } = await get(`/api/profiles/${encodeURIComponent(followee)}`, model.users.get(follower)!.token)
    if (profile.following) actual.follows.add(key)
  })

  // tags: the distinct tags of the articles, most used first, and each tag's count
  const uses = new Map<string, number>()
  for (const a of actual.articles.values()) for (const t of a.tagList) uses.set(t, (uses.get(t) ?? 0) + 1)
  const expectedTags = [...uses].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([t]) => t)
  const { tags } = await get('/api/tags')
  if (!same(tags, expectedTags)) problems.push(`GET /api/tags: ${JSON.stringify(tags)}, expected ${JSON.stringify(expectedTags)}`)
  await mapLimit(expectedTags, 4, async (t) => {
    const { articlesCount } = await get(`/api/articles?tag=${encodeURIComponent(t)}&limit=1`)
    if (articlesCount !== uses.get(t)) problems.push(`tag=${t}: articlesCount ${articlesCount}, but ${uses.get(t)} articles carry it`)
  })
  return actual
}

// ------------------------------------------------------------------ comparing with the model

/**
 * Every acknowledged write must be in `actual`, intact; nothing may be there
 * that no request asked for. Writes in `pending` (in flight at the kill) may
 * have happened or not. Returns the problems.
 */
function compare(model: Model, actual: Actual, pending: Pending[]): string[] {
  const problems: string[] = []
  const p = <K extends Pending['kind']>(kind: K) => pending.filter((x): x is Extract<Pending, { kind: K }> => x.kind === kind)
  const registering = new Map(p('register').map((x) => [x.user.username, x.user]))
  const userUpdates = new Map(p('updateUser').map((x) => [x.username, x]))
  const creating = new Map(p('createArticle').map((x) => [x.fields.title, x.fields]))
  const articleUpdates = new Map(p('updateArticle').map((x) => [x.slug, x]))
  const deletingArticles = new Set(p('deleteArticle').map((x) => x.slug))
  const toggles = new Set([
    ...p('favorite').map((x) => pairKey(x.user, x.slug)),
    ...p('follow').map((x) => pairKey(x.follower, x.followee)),
  ])
  const commenting = new Map(p('comment').map((x) => [x.body, x]))
  const deletingComments = new Set(p('deleteComment').map((x) => x.id))

  // users
  for (const u of model.users.values()) {
    const got = actual.users.get(u.username)
    if (!got) {
      problems.push(`acknowledged user ${u.username} is missing`)
      continue
    }
    const update = userUpdates.get(u.username)
    const allowed = [
      { email: u.email, bio: u.bio, image: u.image },
      ...(update ? [{ email: u.email, bio: update.bio, image: update.image }] : []),
    ]
    if (!allowed.some((a) => same(a, got)))
      problems.push(
        `user ${u.username}: stored ${JSON.stringify(got).slice(0, 300)}, acknowledged ${JSON.stringify(allowed[0]).slice(0, 300)}`,
      )
  }
  for (const [username, got] of actual.users) {
    if (model.users.has(username)) continue
    const r = registering.get(username)
    if (!r) problems.push(`user ${username} exists but no request created it`)
    else if (!same(got, { email: r.email, bio: null, image: null }))
      problems.push(`half-registered user ${username}: ${JSON.stringify(got)}`)
  }

  // articles
  const fieldsOf = (a: ArticleFields) => ({
    title: a.title,
    description: a.description,
    body: a.body,
    tagList: a.tagList,
    author: a.author,
  })
  for (const a of model.articles.values()) {
    const got = actual.articles.get(a.slug)
    if (!a.live) {
      if (got) problems.push(`article ${a.slug} was deleted (acknowledged) but is there`)
      continue
    }
    if (!got) {
      if (!deletingArticles.has(a.slug)) problems.push(`acknowledged article ${a.slug} is missing`)
      continue
    }
    const update = articleUpdates.get(a.slug)
    const allowed = [fieldsOf(a), ...(update ? [fieldsOf({ ...a, ...update })] : [])]
    if (!allowed.some((x) => same(x, fieldsOf(got))))
      problems.push(
        `article ${a.slug}: stored ${JSON.stringify(fieldsOf(got)).slice(0, 400)}, acknowledged ${JSON.stringify(allowed[0]).slice(0, 400)}`,
      )
  }
  for (const [slug, got] of actual.articles) {
    if (model.articles.has(slug)) continue
    const c = creating.get(got.title)
    if (!c) problems.push(`article ${slug} exists but no request created it`)
    else if (!same(fieldsOf({ ...c, tagList: sortedTags(c.tagList) }), fieldsOf(got)))
      problems.push(`half-created article ${slug}: ${JSON.stringify(fieldsOf(got)).slice(0, 400)}`)
  }

  // favorites and follows
  const pairs = (what: string, modelled: Map<string, boolean>, stored: Set<string>, relevant: (key: string) => boolean) => {
    for (const [key, on] of modelled) {
      if (toggles.has(key) || !relevant(key)) continue
      if (stored.has(key) !== on) problems.push(`${what} ${JSON.stringify(key.split('\n'))}: acknowledged ${on}, stored ${stored.has(key)}`)
    }
    for (const key of stored) {
      if (!modelled.get(key) && !toggles.has(key))
        problems.push(`${what} ${JSON.stringify(key.split('\n'))} is stored but was never acknowledged`)
    }
  }
  // a favorite of an article whose delete was in flight may be gone with it
  pairs(
    'favorite',
    model.favorites,
    actual.favorites,
    (key) => actual.articles.has(key.split('\n')[1]!) || !deletingArticles.has(key.split('\n')[1]!),
  )
  pairs('follow', model.follows, actual.follows, () => true)

  // comments
  for (const c of model.comments.values()) {
    const got = actual.comments.get(c.id)
    if (!c.live) {
      if (got) problems.push(`comment ${c.id} was deleted (acknowledged) but is there`)
      continue
    }
    if (!got) {
      if (!deletingComments.has(c.id) && !(deletingArticles.has(c.slug) && !actual.articles.has(c.slug)))
        problems.push(`acknowledged comment ${c.id} on ${c.slug} is missing`)
      continue
    }
    if (!same(got, { slug: c.slug, body: c.body, author: c.author }))
      problems.push(`comment ${c.id}: stored ${JSON.stringify(got).slice(0, 300)}`)
  }
  for (const [id, got] of actual.comments) {
    if (model.comments.has(id)) continue
    const c = commenting.get(got.body)
    if (!c || c.slug !== got.slug || c.author !== got.author)
      problems.push(`comment ${id} exists but no request created it: ${JSON.stringify(got).slice(0, 300)}`)
  }

  // favoritesCount against the favorites stored
  const counted = new Map<string, number>()
  for (const key of actual.favorites) counted.set(key.split('\n')[1]!, (counted.get(key.split('\n')[1]!) ?? 0) + 1)
  for (const [slug, a] of actual.articles) {
    if (a.favoritesCount !== (counted.get(slug) ?? 0))
      problems.push(`${slug}: favoritesCount ${a.favoritesCount}, favorites stored ${counted.get(slug) ?? 0}`)
  }
  return problems
}

/** After a check against the file: what the in-flight writes did is now known; take it into the model. */
function adopt(model: Model, actual: Actual, pending: Pending[]) {
  for (const op of pending) {
    switch (op.kind) {
      case 'register':
        if (actual.users.has(op.user.username)) model.users.set(op.user.username, { ...op.user, token: undefined })
        break
      case 'updateUser': {
        const u = model.users.get(op.username)!
        const got = actual.users.get(op.username)!
        u.bio = got.bio
        u.image = got.image
        break
      }
      case 'createArticle':
        for (const [slug, a] of actual.articles) {
          if (a.title === op.fields.title)
            model.articles.set(slug, { ...op.fields, tagList: sortedTags(op.fields.tagList), slug, live: true })
        }
        break
      case 'updateArticle': {
        const got = actual.articles.get(op.slug)
        const a = model.articles.get(op.slug)!
        if (got) Object.assign(a, { description: got.description, body: got.body, tagList: got.tagList })
        break
      }
      case 'deleteArticle':
        if (!actual.articles.has(op.slug)) model.deleteArticle(op.slug)
        model.deleting.delete(op.slug)
        break
      case 'favorite': {
        const key = pairKey(op.user, op.slug)
        if (actual.articles.has(op.slug)) model.favorites.set(key, actual.favorites.has(key))
        break
      }
      case 'follow': {
        const key = pairKey(op.follower, op.followee)
        model.follows.set(key, actual.follows.has(key))
        break
      }
      case 'comment':
        for (const [id, c] of actual.comments) {
          if (c.body === op.body && !model.comments.has(id)) model.comments.set(id, { id, ...c, live: true })
        }
        break
      case 'deleteComment':
        if (!actual.comments.has(op.id)) model.comments.get(op.id)!.live = false
        break
    }
  }
  // a comment of an article deleted by an in-flight delete went with it
  for (const c of model.comments.values()) if (c.live && !actual.comments.has(c.id) && !actual.articles.has(c.slug)) c.live = false
}

/** A copy of the database file and its WAL, so the check neither recovers nor checkpoints the original. */
function copyDatabase(dir: string, into: string): string {
  mkdirSync(into, { recursive: true })
  const target = join(into, 'conduit.db')
  copyFileSync(join(dir, 'conduit.db'), target)
  if (existsSync(join(dir, 'conduit.db-wal'))) copyFileSync(join(dir, 'conduit.db-wal'), `${target}-wal`)
  return target
}

/**
 * The stored state and its invariants, read while the server is dead: on
 * SQLite from a copy of the file and its WAL (so the check neither recovers
 * nor checkpoints the original), on PostgreSQL from the database.
 */
async function inspect(database: Awaited<ReturnType<typeof binaryDatabase>>, dir: string, into: string) {
  const db = onPostgres ? database.queries(dir) : sqliteQueries(new Database(copyDatabase(dir, into)))
  try {
    if (onPostgres) {
      // The killed process's server connections outlive it until their statements end: a COMMIT it
      // sent just before the kill still lands. What was in flight is known only once they are gone.
      const until = Date.now() + 15_000
      const others = () => db.count('SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
      while ((await others()) > 0 && Date.now() < until) await Bun.sleep(50)
      expect(await others()).toBe(0)
    }
    return { violations: await storageViolations(db), stored: await readDb(db) }
  } finally {
    await db.close()
  }
}

test(`acknowledged writes survive ${CYCLES} SIGKILLs of the binary, intact, with consistent counters (seed ${SEED})`, async () => {
  console.log(`crash.test.ts: seed ${SEED} (replay with CRASH_SEED=${SEED})`)
  const r = rng(SEED)
  const dir = installBinary(binary())
  const scratch = tempDir('conduit-crash-check-')
  const database = await binaryDatabase()
  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...database.env }
  const model = new Model()
  const mine = Array.from({ length: WORKERS }, () => ({ users: [] as string[], articles: [] as string[], comments: [] as number[] }))
  let server: Server = await startServer(binary(), { dir, env })

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const ctx: Ctx = { model, base: server.url, stopped: false, unexpected: [], pending: [], cycle }
    const before = model.acknowledged
    const running = mine.map((m, w) => worker(ctx, w, rng(SEED * 31 + cycle * 1009 + w), m))
    // killed at a random moment once the cycle has its first writes acknowledged (a busy machine
    // acknowledges fewer in a fixed time): the writes in flight then are what the cycle is about
    const killAfter = r.int(0, 1700)
    const until = Date.now() + 15_000
    while (model.acknowledged - before <= 20 && Date.now() < until) await Bun.sleep(20)
    await Bun.sleep(killAfter)
    ctx.stopped = true
    const killed = await server.stop('SIGKILL')
    await withTimeout(Promise.all(running), 20_000, 'workers after the kill')
    expect(killed.signal).toBe('SIGKILL')
    console.log(
      `cycle ${cycle}: killed ${killAfter} ms after its 21st acknowledged write; ${model.acknowledged - before} writes acknowledged this cycle (${model.acknowledged} in all), ${ctx.pending.length} in flight at the kill`,
    )
    expect(ctx.unexpected).toEqual([])
    expect(model.acknowledged - before).toBeGreaterThan(20)

    // the process is dead: check the stored data itself
    const { violations, stored } = await inspect(database, dir, join(scratch, `cycle-${cycle}`))
    expect(violations).toEqual([])
    expect(compare(model, stored, ctx.pending)).toEqual([])
    adopt(model, stored, ctx.pending)
    expect(compare(model, stored, [])).toEqual([])

    // restart on the same file: the API shows exactly that state, counters included
    server = await startServer(binary(), { dir, env })
    const problems: string[] = []
    const served = await readApi(server.url, model, problems)
    expect(problems).toEqual([])
    expect(compare(model, served, [])).toEqual([])
    expect(served.articles.size).toBe(model.liveArticles().length)
    expect(served.users.size).toBe(model.users.size)
  }

  // a clean shutdown at the end, and one more look at the file
  const stopped = await server.stop('SIGTERM')
  expect(stopped).toMatchObject({ code: 0, timedOut: false })
  const final = join(dir, 'conduit.db')
  // SQLite: a clean shutdown checkpoints the WAL into the file
  if (!onPostgres) expect(existsSync(`${final}-wal`) ? Bun.file(`${final}-wal`).size : 0).toBe(0)
  const { violations, stored } = await inspect(database, dir, join(scratch, 'final'))
  expect(violations).toEqual([])
  expect(compare(model, stored, [])).toEqual([])
  expect(stored.articles.size).toBe(model.liveArticles().length)
  console.log(
    `final: ${model.users.size} users, ${model.liveArticles().length} articles (${model.articles.size - model.liveArticles().length} deleted), ` +
      `${[...model.comments.values()].filter((c) => c.live).length} comments, ${stored.favorites.size} favorites, ${stored.follows.size} follows`,
  )
}, 120_000)
