import { describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import type { App } from '../../src/app.ts'
import type { Config } from '../../src/config.ts'
import { testApp } from '../support/app.ts'
import { onPostgres, type TestDatabase } from '../support/backend.ts'
import { readFileSync } from 'node:fs'
import { startServer, useBinary } from '../e2e/support.ts'
import { snapshot } from '../reliability/invariants.ts'

/**
 * Property-based robustness: generated malformed and adversarial requests to
 * every route of the contract's table (wrong JSON types, deep nesting, huge
 * strings within and over the limits, lone surrogates, odd percent-encoding in
 * path segments, absurd list queries, forged and malformed tokens, odd
 * Content-Types, invalid UTF-8). Whatever is sent, every response must:
 * - never be a 5xx;
 * - for a 4xx, be the error envelope {"errors": {key: [string, ...]}} as JSON;
 * - never contain a submitted password;
 * - on an error, show no stack trace, SQL, file path or exception name;
 * - on a rejected request (and on any GET), leave every stored row as it was.
 *
 * The app is the real one on a fresh in-memory database, reached through
 * app.handle with hand-built Requests (so raw bytes and any header can be sent).
 * FUZZ_SEED=<n> replays a run (fast-check prints the seed and path of a failure);
 * FUZZ_RUNS=<n> changes the runs per route.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ Math.floor(Math.random() * 2 ** 31)) | 0
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 150
console.log(`fuzz.test.ts: seed ${SEED}, ${RUNS} runs per route (replay with FUZZ_SEED=${SEED})`)

const PASSWORDS = { alice: 'alice-secret-Pw1', bob: 'bob-secret-Pw2', carol: 'carol-secret-Pw3' }
type Who = keyof typeof PASSWORDS

// ------------------------------------------------------------------ a small world to attack

interface World {
  app: App
  db: TestDatabase
  tokens: Record<Who, string>
  slug: string
  commentId: number
  secret: string
}

async function send(app: World['app'], method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array) {
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }))
  return { status: res.status, headers: res.headers, text: await res.text() }
}

async function makeWorld(overrides: Partial<Config> = {}): Promise<World> {
  const { app, db } = await testApp({ passwordHash: { memoryCost: 256, timeCost: 1 }, ...overrides })
  const json = { 'content-type': 'application/json' }
  const tokens = {} as Record<Who, string>
  for (const who of Object.keys(PASSWORDS) as Who[]) {
    const res = await send(
      app,
      'POST',
      '/api/users',
      json,
      JSON.stringify({ user: { username: who, email: `${who}@example.com`, password: PASSWORDS[who] } }),
    )
    if (res.status !== 201) throw new Error(`world: register ${who}: ${res.status} ${res.text}`)
    tokens[who] = JSON.parse(res.text).user.token
  }
  const auth = (who: Who) => ({ ...json, authorization: `Token ${tokens[who]}` })
  const article = await send(
    app,
    'POST',
    '/api/articles',
    auth('alice'),
    JSON.stringify({ article: { title: 'Fuzz target', description: 'd', body: 'b', tagList: ['fuzz', 'target'] } }),
  )
  const slug = JSON.parse(article.text).article.slug as string
  const comment = await send(app, 'POST', `/api/articles/${slug}/comments`, auth('bob'), JSON.stringify({ comment: { body: 'a comment' } }))
  await send(app, 'POST', '/api/profiles/alice/follow', auth('bob'))
  await send(app, 'POST', `/api/articles/${slug}/favorite`, auth('bob'))
  const secret = (await db.get<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'"))!.value
  return { app, db, tokens, slug, commentId: JSON.parse(comment.text).comment.id, secret }
}

/** A text column's stored bytes. */
const bytesOf = (column: string) => (onPostgres ? `convert_to(${column}, 'UTF8')` : `CAST(${column} AS BLOB)`)

// ------------------------------------------------------------------ checks on every response

const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat [^\s"]*\s*\(?[^\s"]*:\d+:\d+/],
  ['a stack trace line', /\n\s+at /],
  ['SQL', /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b/],
  ['an SQLite error', /SQLITE|sqlite|constraint failed|no such (table|column)/],
  ['a file path', /\/work\/|\/src\/|node_modules|\.tsx?\b|\.js:\d/],
  ['an exception name', /\b(TypeError|RangeError|ReferenceError|SyntaxError|SQLiteError|ValidationError|ParseError)\b/],
  ['undefined/NaN text', /\bundefined\b|\bNaN\b|\[object Object\]/],
]

function isEnvelope(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false
  const keys = Object.keys(body)
  if (keys.length !== 1 || keys[0] !== 'errors') return false
  const errors = (body as { errors: unknown }).errors
  if (!errors || typeof errors !== 'object' || Array.isArray(errors) || Object.keys(errors).length === 0) return false
  return Object.values(errors).every((v) => Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string' && m.length > 0))
}

/** Strings worth checking for an echo: passwords of 8+ characters not also sent in another field. */
function passwordsIn(body: unknown): string[] {
  const passwords: string[] = []
  const others: string[] = []
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') (key === 'password' ? passwords : others).push(v)
    else if (Array.isArray(v)) for (const x of v) walk(x, key)
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k)
  }
  walk(body, '')
  return passwords.filter((p) => p.trim().length >= 8 && !others.some((o) => o.includes(p)))
}

interface Sent {
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Uint8Array
  /** the body as parsed, when it is JSON */
  parsed?: unknown
}

function problemsOf(sent: Sent, res: { status: number; headers: Headers; text: string }, changed: boolean): string[] {
  const out: string[] = []
  if (res.status >= 500) out.push(`status ${res.status}`)
  if (res.status >= 400) {
    let body: unknown
    try {
      body = JSON.parse(res.text)
    } catch {
      body = undefined
    }
    if (!isEnvelope(body)) out.push(`not the error envelope: ${res.text.slice(0, 300)}`)
    if (res.headers.get('content-type') !== 'application/json; charset=utf-8')
      out.push(`error content-type ${res.headers.get('content-type')}`)
    for (const [what, pattern] of LEAKS) if (pattern.test(res.text)) out.push(`error shows ${what}: ${res.text.slice(0, 300)}`)
    if (changed) out.push('a rejected request changed stored data')
  } else if (res.status === 204) {
    if (res.text !== '') out.push(`204 with a body: ${res.text.slice(0, 100)}`)
  } else {
    try {
      JSON.parse(res.text)
    } catch {
      out.push(`${res.status} with a body that is not JSON: ${res.text.slice(0, 100)}`)
    }
  }
  if (sent.method === 'GET' && changed) out.push('a GET changed stored data')
  for (const p of passwordsIn(sent.parsed)) {
    if (res.text.includes(p) || res.text.includes(JSON.stringify(p).slice(1, -1)))
      out.push(`response echoes the password ${JSON.stringify(p).slice(0, 60)}`)
  }
  for (const p of Object.values(PASSWORDS)) if (res.text.includes(p)) out.push('response contains a stored password')
  return out
}

// ------------------------------------------------------------------ generators

/** Percent-encodes every byte of the UTF-8 form (lone surrogates become U+FFFD: never throws, unlike encodeURIComponent). */
const percentEncode = (s: string) =>
  [...new TextEncoder().encode(s)]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('')

const ODD_SEGMENTS = [
  '%',
  '%%',
  '%zz',
  '%0',
  '%00',
  '%2F',
  '%2f',
  '%5C',
  '%2e%2e',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%FE%FF',
  '%C3%28',
  '%F0%9F%90',
  '..',
  '.',
  ';',
  '%3B',
  '+',
  '%20',
  '~',
  '%25',
  '%u0041',
  'a%00b',
  '%0A',
  '%0D%0A',
  '%09',
  '%7F',
]
/** A path segment: the real thing, an odd encoding, or a generated string. */
const segmentArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ known: true as const }) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS).map((raw) => ({ raw })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...ODD_SEGMENTS), fc.constantFrom('prefix', 'fuzz-target', 'alice', '1'))
      .map(([odd, s]) => ({ raw: `${s}${odd}` })),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((s) => ({ raw: percentEncode(s) })) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'grapheme-ascii', maxLength: 20 })
      .filter((s) => !/[/?#\\]/.test(s))
      .map((raw) => ({ raw })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('0', '-1', '1.5', '1e3', '0x10', '99999999999999999999', '9007199254740993', ' 1', 'NaN')
      .map((raw) => ({ raw })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => ({ raw: 'a'.repeat(n) })) },
)
type Segment = { known: true } | { raw: string }

/** A forged or broken credential. */
function tokenMutations(w: World, who: Who, op: number, n: number): string {
  const token = w.tokens[who]
  const [h, p, s] = token.split('.') as [string, string, string]
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString())
  const sign = (input: string, alg = 'sha256') => createHmac(alg, w.secret).update(input).digest('base64url')
  switch (op % 14) {
    case 0:
      return `${h}.${p}.${s.slice(0, n % s.length)}`
    case 1:
      return `${h}.${p}.${s}.`
    case 2:
      return `${h}..${p}.${s}`
    case 3:
      return `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`
    case 4:
      return `${b64({ alg: 'HS512', typ: 'JWT' })}.${p}.${sign(`${b64({ alg: 'HS512', typ: 'JWT' })}.${p}`, 'sha512')}`
    case 5:
      return `${b64({ alg: 'RS256', typ: 'JWT' })}.${p}.${sign(`${b64({ alg: 'RS256', typ: 'JWT' })}.${p}`)}`
    case 6: {
      const forged = b64({ ...claims, sub: [1, -1, 0, 2 ** 53, '1', 1.5, null][n % 7] })
      return `${h}.${forged}.${sign(`${h}.${forged}`)}`
    }
    case 7: {
      const forged = b64({ ...claims, exp: Math.floor(Date.now() / 1000) - 1 })
      return `${h}.${forged}.${sign(`${h}.${forged}`)}`
    }
    case 8:
      return `${token}${'A'.repeat(n)}`
    case 9:
      return `${h}.${p}.${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`
    case 10: {
      const forged = Buffer.from('{"sub":1,"ver":0,"iat":1,"exp":99999999999,"sub":"1 OR 1=1"}').toString('base64url')
      return `${h}.${forged}.${sign(`${h}.${forged}`)}`
    }
    case 11:
      return `${p}.${h}.${s}`
    case 12:
      return token.toUpperCase()
    default:
      return `${h}.${p}`
  }
}

type TokenChoice = { who: Who; scheme: string } | { none: true } | { raw: string } | { forged: Who; op: number; n: number; scheme: string }
const tokenArb: fc.Arbitrary<TokenChoice> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      who: fc.constantFrom<Who>('alice', 'bob', 'carol'),
      scheme: fc.constantFrom('Token', 'Token', 'Bearer', 'token', 'BEARER'),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ none: true as const }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.string({ unit: 'grapheme-ascii', maxLength: 80 }),
        fc.constantFrom(
          '',
          'Token',
          'Token ',
          'Bearer',
          'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
          'Token null',
          'Token undefined',
          'Token a.b.c',
          'Token ..',
          'Token ...',
          'Token .a.b.c.',
          'Token \t x',
        ),
        fc.integer({ min: 100, max: 60_000 }).map((n) => `Token ${'x'.repeat(n)}`),
      )
      .map((raw) => ({ raw })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      forged: fc.constantFrom<Who>('alice', 'bob'),
      op: fc.nat(),
      n: fc.nat({ max: 5000 }),
      scheme: fc.constantFrom('Token', 'Bearer'),
    }),
  },
)

function authorization(w: World, t: TokenChoice): string | undefined {
  if ('none' in t) return undefined
  if ('raw' in t) return t.raw
  if ('who' in t) return `${t.scheme} ${w.tokens[t.who]}`
  return `${t.scheme} ${tokenMutations(w, t.forged, t.op, t.n)}`
}

// absurd list queries
const QUERY_KEYS = [
  'limit',
  'offset',
  'tag',
  'author',
  'favorited',
  'limit[]',
  'tag[]',
  'tag[0]',
  'offset[a]',
  '__proto__',
  'constructor',
  'toString',
  '',
  'LIMIT',
  'a',
]
const ODD_VALUES = [
  '-1',
  '0',
  '1',
  '1.5',
  '1e3',
  '0x10',
  ' 1',
  '1 ',
  '',
  '%',
  '%zz',
  '%00',
  '%ED%A0%80',
  'NaN',
  'Infinity',
  '-0',
  '+1',
  '00001',
  '100',
  '101',
  '99999999999999999999999999999999999',
  '9'.repeat(400),
  '٣',
  '１',
  'alice',
  'ALICE',
  'fuzz',
  '[]',
  '{}',
  'null',
  'true',
  '%2C',
  'a,b',
  'fuzz-target',
]
const queryArb = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...QUERY_KEYS) },
        { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map(percentEncode) },
      ),
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...ODD_VALUES) },
        { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map(percentEncode) },
        { weight: 1, arbitrary: fc.integer().map(String) },
        { weight: 1, arbitrary: fc.integer({ min: 1000, max: 30_000 }).map((n) => 'x'.repeat(n)) },
      ),
      fc.boolean(),
    ),
    { maxLength: 8 },
  )
  .map((pairs) => pairs.map(([k, v, bare]) => (bare && v === '' ? k : `${k}=${v}`)).join('&'))

// bodies
type Wrapper = 'user' | 'article' | 'comment'
const FIELDS: Record<Wrapper, Record<string, number>> = {
  user: { username: 40, email: 254, password: 256, bio: 4000, image: 2048 },
  article: { title: 200, description: 1000, body: 100_000, tagList: 20 },
  comment: { body: 20_000 },
}
const VALID: Record<string, fc.Arbitrary<unknown>> = {
  username: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,20}$/),
  email: fc.stringMatching(/^[a-z]{1,10}@[a-z]{1,10}\.[a-z]{2,4}$/),
  password: fc.string({ minLength: 8, maxLength: 40 }),
  bio: fc.oneof(fc.string({ maxLength: 50 }), fc.constant(null)),
  image: fc.oneof(fc.webUrl(), fc.constant(null), fc.constant('')),
  title: fc.string({ minLength: 1, maxLength: 60 }),
  description: fc.string({ minLength: 1, maxLength: 60 }),
  body: fc.string({ minLength: 1, maxLength: 60 }),
  tagList: fc.oneof(fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }), fc.constant(null)),
}
const fill = (chars: string[], n: number) => fc.constantFrom(...chars).map((c) => c.repeat(n))
function fieldValueArb(field: string, limit: number): fc.Arbitrary<unknown> {
  const sizes = field === 'tagList' ? [39, 40, 41, 400] : [limit - 1, limit, limit + 1, limit * 3]
  return fc.oneof(
    { weight: 4, arbitrary: VALID[field] ?? fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\t\n',
        '\u0000',
        '\u200b',
        '\ud800',
        '\udfff',
        'a\ud800b',
        '🐉',
        'e\u0301',
        '\ufeff',
        '__proto__',
        "'; DROP TABLE users; --",
      ),
    },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({})) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }),
        fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      ),
    },
    { weight: 2, arbitrary: fc.constantFrom(...sizes).chain((n) => fill(['a', 'é', '🐉', ' ', 'x '], Math.max(n, 0))) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...sizes).chain((n) =>
        fc.constantFrom(
          Array.from({ length: Math.max(n, 0) }, (_, i) => `t${i}`),
          Array(Math.max(n, 0)).fill('same'),
          [`${'x'.repeat(41)}`, 'ok'],
        ),
      ),
    },
  )
}
const wrappedArb = (wrapper: Wrapper) =>
  fc
    .tuple(
      fc
        .subarray(Object.keys(FIELDS[wrapper]))
        .chain((keys) => fc.tuple(...keys.map((k) => fieldValueArb(k, FIELDS[wrapper][k]!).map((v) => [k, v] as const)))),
      fc.dictionary(
        fc.constantFrom('extra', '__proto__', 'constructor', 'id', 'token', 'favoritesCount', 'author', 'slug'),
        fc.jsonValue({ maxDepth: 1 }),
        { maxKeys: 2 },
      ),
    )
    .map(([fields, extra]) => ({ [wrapper]: { ...extra, ...Object.fromEntries(fields) } }))

const RAW_BODIES = [
  '{',
  '}',
  '[',
  ']',
  'null',
  'true',
  '0',
  '"x"',
  '{"user":',
  '{}x',
  '\ufeff{}',
  '{"a":1,}',
  'NaN',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '[[[[',
  '{"__proto__":{"admin":true}}',
  '{"user":{"email":"\\ud800","password":"\\udfffabcdefgh"}}',
  '{"article":{"title":"\\ud800","description":"\\udc00","body":"x","tagList":["\\ud800"]}}',
  '{"comment":{"body":"\\ud83d"}}',
  '{"user":{"bio":"\\u12"}}',
  '{"x":"\\x41"}',
  '"\\ud800"',
  '{"user":{"username":"a","username":"b"}}',
  '\u0000',
  ' \n\t ',
]
type Body = { text: string; parsed?: unknown } | { bytes: Uint8Array } | { none: true }
function bodyArb(wrapper: Wrapper | undefined): fc.Arbitrary<Body> {
  const w = wrapper ?? 'user'
  const field = Object.keys(FIELDS[w])[0]!
  const json = (v: unknown) => ({ text: JSON.stringify(v), parsed: v })
  return fc.oneof(
    { weight: 10, arbitrary: wrappedArb(w).map(json) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant([]), fc.array(fc.jsonValue({ maxDepth: 1 })))
        .map((v) => json({ [w]: v })),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json) },
    {
      weight: 2,
      arbitrary: fc.oneof(fc.constantFrom(...RAW_BODIES), fc.string({ unit: 'binary', maxLength: 50 })).map((text) => ({ text })),
    },
    {
      // nesting deep enough to matter, shallow enough to stay fast (the deeper cases are fixed tests below)
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(2, 50, 500, 3000), fc.nat(4)).map(([n, shape]) => ({
        text: [
          '['.repeat(n) + ']'.repeat(n),
          `{"${w}":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`,
          `{"${w}":{"${field}":${'['.repeat(n)}${']'.repeat(n)}}}`,
          `{"${w}":{"${field}":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}}`,
          `{"${w}":{"extra":${'['.repeat(n)}"x"${']'.repeat(n)}}}`,
        ][shape]!,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(1024 * 1024 - 40, 1024 * 1024 + 1, 3 * 1024 * 1024)
        .map((n) => ({ text: `{"${w}":{"${field}":"${'x'.repeat(n)}"}}` })),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes: new Uint8Array([0x7b, ...bytes, 0xff, 0x7d]) })) },
    { weight: 1, arbitrary: fc.constant({ none: true as const }) },
  )
}
const contentTypeArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/json; charset=utf-16',
      'application/xml',
      'application/octet-stream',
      '*/*',
      'application/json, text/plain',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
)

// ------------------------------------------------------------------ the routes of the contract

type Auth = 'none' | 'optional' | 'required'
interface Route {
  method: string
  path: string
  auth: Auth
  body?: Wrapper | 'bodiless'
  query?: boolean
}
const ROUTES: Route[] = [
  { method: 'POST', path: '/api/users', auth: 'none', body: 'user' },
  { method: 'POST', path: '/api/users/login', auth: 'none', body: 'user' },
  { method: 'GET', path: '/api/user', auth: 'required' },
  { method: 'PUT', path: '/api/user', auth: 'required', body: 'user' },
  { method: 'GET', path: '/api/profiles/:username', auth: 'optional' },
  { method: 'POST', path: '/api/profiles/:username/follow', auth: 'required', body: 'bodiless' },
  { method: 'DELETE', path: '/api/profiles/:username/follow', auth: 'required', body: 'bodiless' },
  { method: 'GET', path: '/api/articles', auth: 'optional', query: true },
  { method: 'GET', path: '/api/articles/feed', auth: 'required', query: true },
  { method: 'POST', path: '/api/articles', auth: 'required', body: 'article' },
  { method: 'GET', path: '/api/articles/:slug', auth: 'optional' },
  { method: 'PUT', path: '/api/articles/:slug', auth: 'required', body: 'article' },
  { method: 'DELETE', path: '/api/articles/:slug', auth: 'required', body: 'bodiless' },
  { method: 'POST', path: '/api/articles/:slug/favorite', auth: 'required', body: 'bodiless' },
  { method: 'DELETE', path: '/api/articles/:slug/favorite', auth: 'required', body: 'bodiless' },
  { method: 'GET', path: '/api/articles/:slug/comments', auth: 'optional' },
  { method: 'POST', path: '/api/articles/:slug/comments', auth: 'required', body: 'comment' },
  { method: 'DELETE', path: '/api/articles/:slug/comments/:id', auth: 'required', body: 'bodiless' },
  { method: 'GET', path: '/api/tags', auth: 'none' },
]

interface Generated {
  segments: Segment[]
  token: TokenChoice
  query: string
  body: Body
  contentType: string | undefined
}

const clip = (t: string, n = 200) => (t.length > n ? `${t.slice(0, n)}…(${t.length} chars)` : t)
/** How a generated request is printed in a failure report: short, whatever its size. */
function describeGenerated(g: Generated): string {
  const body =
    'none' in g.body
      ? '(none)'
      : 'bytes' in g.body
        ? `bytes ${Buffer.from(g.body.bytes).toString('hex').slice(0, 100)}`
        : JSON.stringify(clip(g.body.text))
  return `segments=${clip(JSON.stringify(g.segments))} token=${clip(JSON.stringify(g.token))} query=${JSON.stringify(clip(g.query))} content-type=${g.contentType} body=${body}`
}

function generated(route: Route): fc.Arbitrary<Generated> {
  const params = route.path.split('/').filter((s) => s.startsWith(':')).length
  return fc
    .record({
      segments: fc.tuple(...Array.from({ length: params }, () => segmentArb)),
      token: route.auth === 'none' ? fc.oneof(fc.constant<TokenChoice>({ none: true }), tokenArb) : tokenArb,
      query: route.query ? queryArb : fc.oneof({ weight: 5, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryArb }),
      body: route.method === 'GET' ? fc.constant<Body>({ none: true }) : bodyArb(route.body === 'bodiless' ? undefined : route.body),
      contentType: contentTypeArb,
    })
    .map((g) => Object.assign(g, { [fc.toStringMethod]: () => describeGenerated(g) }))
}

function build(w: World, route: Route, g: Generated): Sent {
  let i = 0
  const path = route.path
    .split('/')
    .map((part) => {
      if (!part.startsWith(':')) return part
      const s = g.segments[i++]!
      if ('raw' in s) return s.raw
      return part === ':slug' ? w.slug : part === ':username' ? 'alice' : String(w.commentId)
    })
    .join('/')
  const headers: Record<string, string> = {}
  const auth = authorization(w, g.token)
  if (auth !== undefined) headers.authorization = auth
  if (g.contentType && !('none' in g.body)) headers['content-type'] = g.contentType
  const body = 'none' in g.body ? undefined : 'bytes' in g.body ? g.body.bytes : g.body.text
  let parsed: unknown
  if ('text' in g.body) {
    try {
      parsed = g.body.parsed ?? JSON.parse(g.body.text)
    } catch {
      parsed = undefined
    }
  }
  return { method: route.method, path: g.query ? `${path}?${g.query}` : path, headers, body, parsed }
}

const describeSent = (s: Sent) =>
  `${s.method} ${s.path.slice(0, 300)} headers=${JSON.stringify(s.headers).slice(0, 300)} body=${
    s.body === undefined
      ? '(none)'
      : typeof s.body === 'string'
        ? JSON.stringify(s.body.slice(0, 300))
        : `bytes ${Buffer.from(s.body).toString('hex').slice(0, 200)}`
  }`

// ------------------------------------------------------------------ the properties

describe('every route of the contract, under generated adversarial requests', () => {
  test('the routes fuzzed are the routes the app declares, with their auth and body', async () => {
    const { app, db } = await testApp()
    const wrapper = (r: (typeof app.declared)[number]) =>
      r.body ? Object.keys(r.body.properties)[0] : r.method === 'GET' ? undefined : 'bodiless'
    const declared = app.declared.map((r) => `${r.method} /api${r.path} ${r.auth} ${wrapper(r)}`)
    expect(ROUTES.map((r) => `${r.method} ${r.path} ${r.auth} ${r.body}`).sort()).toEqual(declared.sort())
    await db.store.close()
    await db.close()
  })

  for (const [index, route] of ROUTES.entries()) {
    test(`${route.method} ${route.path}: no 5xx, the envelope on 4xx, no echo or leak, nothing stored on rejection`, async () => {
      let world = await makeWorld()
      let requests = 0
      await fc.assert(
        fc.asyncProperty(generated(route), async (g) => {
          const sent = build(world, route, g)
          let request: Request
          try {
            request = new Request(`http://localhost${sent.path}`, { method: sent.method, headers: sent.headers, body: sent.body })
          } catch {
            // not a request any HTTP client could send (the generator's fault)
            fc.pre(false)
            return
          }
          const before = await snapshot(world.db)
          const raw = await world.app.handle(request)
          const res = { status: raw.status, headers: raw.headers, text: await raw.text() }
          const after = await snapshot(world.db)
          requests++
          const changed = JSON.stringify(before) !== JSON.stringify(after)
          const problems = problemsOf(sent, res, changed)
          if (problems.length)
            throw new Error(`${describeSent(sent)}\n  -> ${res.status} ${res.text.slice(0, 300)}\n  ${problems.join('\n  ')}`)
          // an accepted write changed the world: start the next run from a fresh one, and let the old
          // one's connections go (on PostgreSQL, a run with many accepted writes ran out of them)
          if (changed) {
            const old = world
            world = await makeWorld()
            await old.db.store.close()
            await old.db.close()
          }
        }),
        {
          numRuns: RUNS,
          seed: SEED + index,
          // a short report: the seed and path to replay, the request, what was wrong
          asyncReporter: async (details) => {
            if (!details.failed) return
            const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
            throw new Error(
              `property failed after ${details.numRuns} runs (seed ${details.seed}, path "${details.counterexamplePath}"; replay with FUZZ_SEED=${SEED})\n` +
                `counterexample: ${details.counterexample ? describeGenerated(details.counterexample[0]) : '?'}\n${error.slice(0, 2000)}`,
            )
          },
        },
      )
      expect(requests).toBeGreaterThan(RUNS / 2)
    }, 60_000)
  }
})

// ------------------------------------------------------------------ fixed cases the properties found or must keep covering

describe('odd percent-encoding in path segments', () => {
  const SEGMENTS = ['%', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%FF', 'x%']

  // one test per route, every segment in it: the failure shows the answer to each
  const answers = async (w: World, method: string, path: (seg: string) => string, token?: string) => {
    const out: Record<string, string> = {}
    for (const seg of SEGMENTS) {
      const res = await send(w.app, method, path(seg), token ? { authorization: `Token ${token}` } : {})
      out[seg] = `${res.status} ${res.text}`
    }
    return out
  }
  const every = (answer: string) => Object.fromEntries(SEGMENTS.map((seg) => [seg, answer]))

  test(`GET /api/articles/<${SEGMENTS.join(' ')}> answers 404 article not found (it names no article)`, async () => {
    const w = await makeWorld()
    expect(await answers(w, 'GET', (seg) => `/api/articles/${seg}`)).toEqual(every('404 {"errors":{"article":["not found"]}}'))
  })

  test(`GET /api/profiles/<${SEGMENTS.join(' ')}> answers 404 profile not found (it names no user)`, async () => {
    const w = await makeWorld()
    expect(await answers(w, 'GET', (seg) => `/api/profiles/${seg}`)).toEqual(every('404 {"errors":{"profile":["not found"]}}'))
  })

  test(`DELETE /api/articles/:slug/comments/<${SEGMENTS.join(' ')}> answers 404 comment not found (not a decimal id: DECISIONS.md)`, async () => {
    const w = await makeWorld()
    expect(await answers(w, 'DELETE', (seg) => `/api/articles/${w.slug}/comments/${seg}`, w.tokens.alice)).toEqual(
      every('404 {"errors":{"comment":["not found"]}}'),
    )
    expect(await w.db.count('SELECT count(*) FROM comments')).toBe(1)
  })

  test.each(['%00', '%2F', 'fuzz%2Dtarget', 'FUZZ-TARGET', 'fuzz-target%20'])(
    'GET /api/articles/%s: decoded and matched exactly',
    async (seg) => {
      const w = await makeWorld()
      const res = await send(w.app, 'GET', `/api/articles/${seg}`, {})
      const decoded = decodeURIComponent(seg)
      if (decoded === w.slug) expect(res.status).toBe(200)
      else expect({ status: res.status, body: JSON.parse(res.text) }).toEqual({ status: 404, body: { errors: { article: ['not found'] } } })
    },
  )
})

describe('lone surrogates (invalid Unicode in JSON escapes)', () => {
  const create = async (w: World, tagList: string) =>
    send(
      w.app,
      'POST',
      '/api/articles',
      { authorization: `Token ${w.tokens.alice}`, 'content-type': 'application/json' },
      `{"article":{"title":"Lone \\ud800 surrogate","description":"d\\udfff","body":"b","tagList":${tagList}}}`,
    )

  test('an accepted title or text field is stored as valid UTF-8 and reads back as it was answered', async () => {
    const w = await makeWorld()
    const res = await create(w, '[]')
    expect([201, 422]).toContain(res.status)
    if (res.status !== 201) return
    const article = JSON.parse(res.text).article
    const again = JSON.parse((await send(w.app, 'GET', `/api/articles/${article.slug}`, {})).text).article
    expect(again.title).toBe(article.title)
    expect(again.description).toBe(article.description)
    const bytes = (await w.db.get<{ t: Uint8Array; d: Uint8Array }>(
      `SELECT ${bytesOf('title')} AS t, ${bytesOf('description')} AS d FROM articles WHERE slug = ?`,
      article.slug,
    ))!
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes.t)).not.toThrow()
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes.d)).not.toThrow()
  })

  test('a tag with a lone surrogate is rejected (422) or stored so that the tag the API shows finds the article', async () => {
    const w = await makeWorld()
    const res = await create(w, '["\\ud800", "ok\\udc00"]')
    expect([201, 422]).toContain(res.status)
    if (res.status === 422) {
      expect(isEnvelope(JSON.parse(res.text))).toBe(true)
      return
    }
    const article = JSON.parse(res.text).article
    // the database holds valid UTF-8 only
    for (const row of await w.db.all<{ name: string; bytes: Uint8Array }>(`SELECT name, ${bytesOf('name')} AS bytes FROM tags`)) {
      expect({
        tag: row.name,
        valid: (() => {
          try {
            new TextDecoder('utf-8', { fatal: true }).decode(row.bytes)
            return true
          } catch {
            return false
          }
        })(),
      }).toEqual({ tag: row.name, valid: true })
    }
    // every tag the article shows lists it, and /api/tags shows the same spelling
    const tags = JSON.parse((await send(w.app, 'GET', '/api/tags', {})).text).tags as string[]
    for (const tag of article.tagList as string[]) {
      expect(tags).toContain(tag)
      const list = JSON.parse((await send(w.app, 'GET', `/api/articles?tag=${encodeURIComponent(tag)}`, {})).text)
      expect({ tag, found: list.articles.map((a: { slug: string }) => a.slug) }).toEqual({ tag, found: [article.slug] })
    }
  })
})

describe('fixed adversarial bodies', () => {
  // Deep nesting costs the server time only where it validates the value, so every case is also timed:
  // one request may not hold the (single) event loop for a second.
  test.each([
    [
      'a 10,000-deep array as a field value (20 KB)',
      `{"article":{"title":${'['.repeat(10_000)}${']'.repeat(10_000)},"description":"d","body":"b"}}`,
    ],
    [
      'a 15,000-deep object as a field value (75 KB)',
      `{"article":{"title":"t","description":${'{"a":'.repeat(15_000)}1${'}'.repeat(15_000)},"body":"b"}}`,
    ],
    ['a 16,000-deep array as the whole body (32 KB)', '['.repeat(16_000) + ']'.repeat(16_000)],
    [
      'a 100,000-deep object under an unknown key (600 KB)',
      `{"article":{"title":"","description":"d","body":"b","x":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`,
    ],
    ['an unterminated 500,000-deep array (500 KB)', '['.repeat(500_000)],
  ])(
    'POST /api/articles with %s answers 400 or 422 within a second and stores nothing',
    async (_what, body) => {
      const w = await makeWorld()
      const before = await snapshot(w.db)
      const t0 = performance.now()
      const res = await send(
        w.app,
        'POST',
        '/api/articles',
        { authorization: `Token ${w.tokens.alice}`, 'content-type': 'application/json' },
        body,
      )
      const ms = Math.round(performance.now() - t0)
      // status and body in one string, so a failure shows both
      expect(`${res.status} ${res.text.slice(0, 200)}`).toMatch(/^(400|422) /)
      expect(isEnvelope(JSON.parse(res.text))).toBe(true)
      expect(await snapshot(w.db)).toEqual(before)
      expect(ms).toBeLessThan(1000)
    },
    30_000,
  )

  test('a prototype-polluting body changes no object of the server', async () => {
    const w = await makeWorld()
    const res = await send(
      w.app,
      'PUT',
      '/api/user',
      { authorization: `Token ${w.tokens.alice}`, 'content-type': 'application/json' },
      '{"user":{"__proto__":{"polluted":"yes","bio":"from proto"},"constructor":{"prototype":{"polluted":"yes"}}}}',
    )
    expect(res.status).toBeLessThan(500)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const me = JSON.parse((await send(w.app, 'GET', '/api/user', { authorization: `Token ${w.tokens.alice}` })).text).user
    expect(me.bio).toBeNull()
  })
})

describe('a deeply nested body on the real server', () => {
  const binary = useBinary()
  const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

  test('a 24 KB body (12,000 nested arrays) neither holds the server for a second nor grows its memory by 100 MiB', async () => {
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' } })
    try {
      const before = rss(server.proc.pid)
      const n = 12_000
      const t0 = performance.now()
      const pending = fetch(`${server.url}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '['.repeat(n) + ']'.repeat(n),
        signal: AbortSignal.timeout(20_000),
      })
      await Bun.sleep(20)
      // another client's request meanwhile
      const h0 = performance.now()
      const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(20_000) })
      const healthMs = Math.round(performance.now() - h0)
      const res = await pending
      const text = await res.text()
      const ms = Math.round(performance.now() - t0)
      const grown = Math.round((rss(server.proc.pid) - before) / (1024 * 1024))
      expect(health.status).toBe(200)
      expect(`${res.status} ${text.slice(0, 200)}`).toMatch(/^(400|422) /)
      const problems = [
        ...(ms >= 1000 ? [`the request took ${ms} ms`] : []),
        ...(healthMs >= 1000 ? [`GET /health meanwhile waited ${healthMs} ms`] : []),
        ...(grown >= 100 ? [`the server's RSS grew by ${grown} MiB (from ${Math.round(before / (1024 * 1024))} MiB)`] : []),
      ]
      expect(problems).toEqual([])
    } finally {
      await server.stop()
    }
  }, 60_000)
})
