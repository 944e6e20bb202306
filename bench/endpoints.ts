/**
 * What is measured: the endpoints, with their parameters discovered from the
 * seeded database through the API itself (tokens by logging in, a popular
 * tag, an author with articles, a user with favorites, existing slugs).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MIX, type WrkScript } from './wrk.ts'
import { mulberry32 } from '../src/random.ts'

/** The mixed-traffic variants and their share of writes (% of all requests). */
export const MIX_VARIANTS = { 'mix-0': 0, 'mix-1': 1, 'mix-5': 5 } as const
export type MixName = keyof typeof MIX_VARIANTS
export const isMix = (name: string): name is MixName => name in MIX_VARIANTS

export const ENDPOINT_NAMES = [
  ...(Object.keys(MIX_VARIANTS) as MixName[]),
  'list',
  'list-auth',
  'tag',
  'author',
  'favorited',
  'offset',
  'feed',
  'article',
  'tags',
  'list-uncached',
  'list-auth-uncached',
  'feed-uncached',
  'create',
  'favorite',
] as const
export type EndpointName = (typeof ENDPOINT_NAMES)[number]

interface RequestSpec {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
}

interface Endpoint {
  name: EndpointName
  /** what a reader sees in the table, e.g. GET /api/articles?tag=… */
  title: string
  kind: 'read' | 'write' | 'mix'
  /** the request whose response is captured for the bound */
  capture: RequestSpec
  script: WrkScript
}

export interface Fixture {
  articles: number
  /** the user of authenticated reads and of create: follows some users (non-empty feed) */
  user: string
  token: string
  /** tokens of several users, for favorite */
  tokens: string[]
  tag: string
  secondTag: string
  author: string
  favoritedBy: string
  slug: string
  slugsFile: string
  slugCount: number
  /** what the mixed traffic draws from, when a mix variant is measured */
  mix?: MixFixture
}

interface MixFixture {
  /** lines "S <slug>", "T <tag>", "U <username>", "K <token>", "P <pages>" (see wrk.ts) */
  dataFile: string
  slugs: number
  tags: number
  users: number
  tokens: number
  pages: number
  /** seconds the logins took */
  loginSeconds: number
}

export const SEED_PASSWORD = 'password123'
/** users logged in for favorite (one per connection in flight) and to find a reader with a feed */
const LOGINS = 64
const SLUG_PAGES = 60
/** signed-in users of the mixed traffic */
const MIX_LOGINS = 200

async function api<T>(base: string, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(30_000) })
  const text = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text) as T
}

interface List {
  articles: { slug: string }[]
  articlesCount: number
}

/** A deterministic shuffle of the favorite slugs. */
function shuffle<T>(xs: T[], seed: number): T[] {
  const next = mulberry32(seed)
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
  return xs
}

async function login(base: string, i: number): Promise<{ user: string; token: string }> {
  const r = await api<{ user: { token: string; username: string } }>(base, '/api/users/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ user: { email: `user${i}@example.com`, password: SEED_PASSWORD } }),
  })
  return { user: r.user.username, token: r.user.token }
}

export async function discover(
  base: string,
  tmpDir: string,
  users: number,
  o: { mix: boolean; seed: number } = { mix: false, seed: 1 },
): Promise<Fixture> {
  const tokens: { user: string; token: string }[] = []
  for (let i = 1; i <= Math.min(LOGINS, users); i++) tokens.push(await login(base, i))
  let reader: { user: string; token: string } | undefined
  for (const t of tokens) {
    const feed = await api<List>(base, '/api/articles/feed?limit=1', { headers: { Authorization: `Token ${t.token}` } })
    if (feed.articlesCount > 0) {
      reader = t
      break
    }
  }
  if (!reader) throw new Error('none of the first seeded users follows anyone with articles (empty feeds)')

  const { tags } = await api<{ tags: string[] }>(base, '/api/tags')
  if (tags.length < 2) throw new Error('the seeded database has fewer than 2 tags')

  const firstWith = async (param: 'author' | 'favorited'): Promise<string> => {
    for (let i = 2; i <= Math.min(users, 50); i++) {
      const r = await api<List>(base, `/api/articles?${param}=user${i}&limit=1`)
      if (r.articlesCount > 0) return `user${i}`
    }
    throw new Error(`no seeded user among the first 50 has ${param === 'author' ? 'articles' : 'favorites'}`)
  }
  const author = await firstWith('author')
  const favoritedBy = await firstWith('favorited')

  const { articlesCount } = await api<List>(base, '/api/articles?limit=1')
  if (articlesCount === 0) throw new Error('the seeded database has no articles')
  const middle = await api<List>(base, `/api/articles?limit=1&offset=${Math.floor(articlesCount / 2)}`)
  const slug = middle.articles[0]!.slug

  // slugs spread over the whole data set, for favorite
  const pages = Math.min(SLUG_PAGES, Math.ceil(articlesCount / 100))
  const seen = new Set<string>()
  for (let p = 0; p < pages; p++) {
    const offset = pages === 1 ? 0 : Math.floor((p * Math.max(0, articlesCount - 100)) / (pages - 1))
    const page = await api<List>(base, `/api/articles?limit=100&offset=${offset}`)
    for (const a of page.articles) seen.add(a.slug)
  }
  const slugs = shuffle([...seen], 42)
  const slugsFile = join(tmpDir, `slugs-${process.pid}-${articlesCount}.txt`)
  writeFileSync(slugsFile, `${slugs.join('\n')}\n`)
  const mix = o.mix ? await discoverMix(base, tmpDir, { users, articles: articlesCount, slugs, tags, seed: o.seed }) : undefined

  return {
    articles: articlesCount,
    user: reader.user,
    token: reader.token,
    tokens: tokens.map((t) => t.token),
    tag: tags[0]!,
    secondTag: tags[1]!,
    author,
    favoritedBy,
    slug,
    slugsFile,
    slugCount: slugs.length,
    ...(mix ? { mix } : {}),
  }
}

/** Path segments and query values the Lua script can use as they are. */
const URL_SAFE = /^[A-Za-z0-9._~-]+$/

/**
 * What the mixed traffic draws from: the slugs found above (their shuffled
 * order is their popularity rank), the tags most used first, every seeded
 * username in a seeded shuffled order, and tokens of MIX_LOGINS users spread
 * over the seeded ones, logged in through the API (each login costs an
 * argon2 check, about 40 ms on the server's core; two at a time).
 */
async function discoverMix(
  base: string,
  tmpDir: string,
  d: { users: number; articles: number; slugs: string[]; tags: string[]; seed: number },
): Promise<MixFixture> {
  const n = Math.min(MIX_LOGINS, d.users)
  const ids = Array.from({ length: n }, (_, k) => 1 + Math.floor((k * d.users) / n))
  const t0 = performance.now()
  const tokens: string[] = new Array(n)
  let next = 0
  const worker = async () => {
    for (let k = next++; k < n; k = next++) tokens[k] = (await login(base, ids[k]!)).token
  }
  await Promise.all([worker(), worker()])
  const loginSeconds = (performance.now() - t0) / 1000
  const slugs = d.slugs.map(encodeURIComponent)
  const tags = d.tags.filter((t) => URL_SAFE.test(t))
  const users = shuffle(
    Array.from({ length: d.users }, (_, i) => `user${i + 1}`),
    d.seed + 7,
  )
  if (slugs.length === 0 || tags.length < 2 || tokens.length === 0) {
    throw new Error(`the mixed traffic needs slugs, 2+ URL-safe tags and tokens (${slugs.length}, ${tags.length}, ${tokens.length})`)
  }
  const pages = Math.max(1, Math.ceil(d.articles / MIX.pageSize))
  const lines = [
    `P ${pages}`,
    ...slugs.map((s) => `S ${s}`),
    ...tags.map((t) => `T ${t}`),
    ...users.map((u) => `U ${u}`),
    ...tokens.map((t) => `K ${t}`),
  ]
  const dataFile = join(tmpDir, `mix-${process.pid}-${d.articles}.txt`)
  writeFileSync(dataFile, `${lines.join('\n')}\n`)
  return { dataFile, slugs: slugs.length, tags: tags.length, users: users.length, tokens: tokens.length, pages, loginSeconds }
}

const CREATE_TEXT = 'Benchmark body text with a few words in it. '.repeat(12)

/** The request whose response the bound answers to every request of the mixed traffic: a 20-article list page. */
export const MIX_BOUND_PATH = '/api/articles?limit=20'

export function endpoints(f: Fixture, o: { seed: number } = { seed: 1 }): Endpoint[] {
  const auth = { Authorization: `Token ${f.token}` }
  const get = (name: EndpointName, path: string, headers: Record<string, string> = {}): Endpoint => ({
    name,
    title: `GET ${path}${headers.Authorization ? ' (auth)' : ''}`,
    kind: 'read',
    capture: { method: 'GET', path, headers },
    script: { kind: 'fixed', method: 'GET', path, headers },
  })
  const uncached = (name: EndpointName, path: string, token: string): Endpoint => ({
    name,
    title: `GET ${path}&uncached=<n>${token ? ' (auth)' : ''}`,
    kind: 'read',
    capture: { method: 'GET', path, headers: token ? { Authorization: `Token ${token}` } : {} },
    script: { kind: 'unique', path, token },
  })
  const tagList = [f.tag, f.secondTag]
  const captureTitle = `Bench capture ${Date.now()} ${Math.floor(Math.random() * 1e9)}`
  const mix = (name: MixName): Endpoint[] => {
    if (!f.mix) return []
    const writePct = MIX_VARIANTS[name]
    return [
      {
        name,
        title: `mixed traffic, ${writePct} % writes (${f.mix.slugs.toLocaleString('en')} slugs, ${f.mix.tags} tags, ${f.mix.tokens} users signed in)`,
        kind: 'mix',
        capture: { method: 'GET', path: MIX_BOUND_PATH, headers: {} },
        script: { kind: 'mix', dataFile: f.mix.dataFile, writePct, seed: o.seed * 100 + writePct, statuses: 'warmup' },
      },
    ]
  }
  return [
    ...mix('mix-0'),
    ...mix('mix-1'),
    ...mix('mix-5'),
    get('list', '/api/articles'),
    get('list-auth', '/api/articles', auth),
    get('tag', `/api/articles?tag=${encodeURIComponent(f.tag)}`),
    get('author', `/api/articles?author=${encodeURIComponent(f.author)}`),
    get('favorited', `/api/articles?favorited=${encodeURIComponent(f.favoritedBy)}`),
    get('offset', '/api/articles?offset=10000'),
    get('feed', '/api/articles/feed', auth),
    get('article', `/api/articles/${encodeURIComponent(f.slug)}`),
    get('tags', '/api/tags'),
    // the same reads with a response-cache miss on every request
    uncached('list-uncached', '/api/articles?limit=20', ''),
    uncached('list-auth-uncached', '/api/articles?limit=20', f.token),
    uncached('feed-uncached', '/api/articles/feed?limit=20', f.token),
    {
      name: 'create',
      title: 'POST /api/articles (auth, unique titles)',
      kind: 'write',
      capture: {
        method: 'POST',
        path: '/api/articles',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          article: { title: captureTitle, description: 'An article made by the load test', body: CREATE_TEXT, tagList },
        }),
      },
      script: { kind: 'create', token: f.token, tagList },
    },
    {
      name: 'favorite',
      title: `POST /api/articles/:slug/favorite (auth, ${f.slugCount.toLocaleString('en')} slugs x ${f.tokens.length} users)`,
      kind: 'write',
      capture: { method: 'POST', path: `/api/articles/${f.slug}/favorite`, headers: { Authorization: `Token ${f.tokens[0]}` } },
      script: { kind: 'favorite', slugsFile: f.slugsFile, tokens: f.tokens },
    },
  ]
}

/** Headers that Bun.serve sets by itself on every response. */
const AUTOMATIC = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding'])

interface Captured {
  status: number
  headers: [string, string][]
  body: Uint8Array
}

/** One real response for an endpoint: what the bound will answer. */
export async function capture(base: string, r: RequestSpec): Promise<Captured> {
  const res = await fetch(base + r.path, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    signal: AbortSignal.timeout(30_000),
  })
  const body = new Uint8Array(await res.arrayBuffer())
  const headers = [...res.headers.entries()].filter(([k]) => !AUTOMATIC.has(k.toLowerCase()))
  return { status: res.status, headers, body }
}

export async function setBound(boundBase: string, c: Captured): Promise<void> {
  const res = await fetch(`${boundBase}/__bench/response`, {
    method: 'PUT',
    body: JSON.stringify({ status: c.status, headers: c.headers, body: Buffer.from(c.body).toString('base64') }),
  })
  if (res.status !== 204) throw new Error(`the bound server refused the response (${res.status})`)
}
