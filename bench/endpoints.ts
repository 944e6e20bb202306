/**
 * What is measured: the endpoints, with their parameters discovered from the
 * seeded database through the API itself (tokens by logging in, a popular
 * tag, an author with articles, a user with favorites, existing slugs).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { WrkScript } from './wrk.ts'
import { mulberry32 } from '../src/random.ts'

export const ENDPOINT_NAMES = [
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

export interface RequestSpec {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
}

export interface Endpoint {
  name: EndpointName
  /** what a reader sees in the table, e.g. GET /api/articles?tag=… */
  title: string
  kind: 'read' | 'write'
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
}

export const SEED_PASSWORD = 'password123'
const LOGINS = 8
const SLUG_PAGES = 60

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

export async function discover(base: string, tmpDir: string, users: number): Promise<Fixture> {
  const tokens: { user: string; token: string }[] = []
  for (let i = 1; i <= Math.min(LOGINS, users); i++) {
    const r = await api<{ user: { token: string; username: string } }>(base, '/api/users/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user: { email: `user${i}@example.com`, password: SEED_PASSWORD } }),
    })
    tokens.push({ user: r.user.username, token: r.user.token })
  }
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
  writeFileSync(slugsFile, slugs.join('\n') + '\n')

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
  }
}

const CREATE_TEXT = 'Benchmark body text with a few words in it. '.repeat(12)

export function endpoints(f: Fixture): Endpoint[] {
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
  return [
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

export interface Captured {
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
