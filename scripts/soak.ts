#!/usr/bin/env bun
/**
 * Soak test of the compiled binary (not part of `bun test`).
 *
 *   bun scripts/soak.ts [--seconds 60] [--port N] [--workers 8] [--binary PATH] [--cache-mb 8]
 *
 * Builds the binary (or takes --binary / CONDUIT_BINARY), starts it on a fresh
 * database in a temp directory, listening on 127.0.0.1 only, and runs mixed
 * reads and writes from N concurrent workers for a fixed time. Every request
 * is one whose answer is known in advance to be a 2xx; anything else (or a
 * timeout, or a dropped connection) counts as an error. The server's RSS is
 * sampled from /proc/<pid>/status (VmRSS) at start, every 2 s and at the end.
 *
 * Prints requests, errors, p50/p99 latency per kind of request and RSS
 * start/baseline/end/peak, then exits non-zero when there was any error, the
 * server died, or memory grew beyond noise:
 *
 *   end RSS > baseline RSS * 1.25 + 20 MiB
 *
 * where the baseline is the median RSS of the samples in the 10 s after a
 * warm-up (a third of the run, at most 20 s: SQLite's page cache, JIT,
 * allocator pools and the heap have grown by then), and the end RSS the median of the last
 * five samples under load (and, checked the same way, the RSS 1 s after the
 * load stopped). Medians, because RSS swings by tens of MiB with the argon2id
 * hashes (19 MiB each) in flight at the moment of a sample. Bounded: stops by itself, and a
 * watchdog kills everything if it overruns by a minute.
 *
 * The server runs with small caches (CACHE_MB, 8 MiB unless --cache-mb says
 * otherwise), so that they are full within the warm-up: what the check looks
 * for is memory that grows without bound, and caches still filling up to
 * their default budget (90 MiB of values, which takes minutes under this
 * load and a few hundred MiB of process memory with the garbage collector's
 * headroom; see docs/PERFORMANCE.md) would look the same in a short run.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { mulberry32 } from '../src/random.ts'
import { buildCommand } from './build-command.ts'

const ROOT = resolve(import.meta.dir, '..')
const HOST = '127.0.0.1'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    port: { type: 'string' },
    workers: { type: 'string', default: '8' },
    binary: { type: 'string' },
    seed: { type: 'string' },
    'cache-mb': { type: 'string', default: '8' },
  },
  strict: true,
})
const SECONDS = Number(args.seconds)
const WORKERS = Number(args.workers)
if (!Number.isFinite(SECONDS) || SECONDS < 5 || SECONDS > 3600) throw new Error('--seconds must be 5..3600')
if (!Number.isInteger(WORKERS) || WORKERS < 1 || WORKERS > 256) throw new Error('--workers must be 1..256')
const CACHE_MB = Number(args['cache-mb'])
if (!Number.isInteger(CACHE_MB) || CACHE_MB < 1) throw new Error('--cache-mb must be a positive integer')
const SEED = args.seed ? Number(args.seed) : Math.floor(Math.random() * 2 ** 31)
// RSS climbs for the first ~30 s under this load while the heap settles (a 150 s run: ~160 MiB
// at 10-20 s, ~200 MiB from 40 s on, ~215 MiB at 150 s); a baseline taken during that climb
// failed a 60 s run whose end was where every run ends
const WARMUP_MS = Math.min(20_000, (SECONDS * 1000) / 3)
const MIB = 1024 * 1024
const growthLimit = (baseline: number) => baseline * 1.25 + 20 * MIB

const work = mkdtempSync(join(tmpdir(), 'conduit-soak-'))
let server: ReturnType<typeof Bun.spawn> | undefined

// a watchdog: whatever happens, nothing outlives the run by more than a minute
const watchdog = setTimeout(
  () => {
    console.error('soak: watchdog fired; killing the server')
    server?.kill('SIGKILL')
    rmSync(work, { recursive: true, force: true })
    process.exit(3)
  },
  (SECONDS + 120) * 1000,
)

function rng(seed: number) {
  const next = mulberry32(seed)
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!,
  }
}

function freePort(): number {
  const l = Bun.listen({ hostname: HOST, port: 0, socket: { data() {} } })
  const port = l.port
  l.stop(true)
  return port
}

async function build(): Promise<string> {
  const given = args.binary ?? process.env.CONDUIT_BINARY
  if (given) return resolve(given)
  const out = join(work, 'conduit')
  const proc = Bun.spawn({
    cmd: buildCommand(out),
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), 180_000)
  const code = await proc.exited
  clearTimeout(timer)
  if (code !== 0) throw new Error(`build failed (${code}): ${await new Response(proc.stderr).text()}`)
  return out
}

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!m) throw new Error('no VmRSS')
  return Number(m[1]) * 1024
}

// ------------------------------------------------------------------ requests and their measurements

const latencies = new Map<string, number[]>()
const errors: string[] = []
let requests = 0

interface Res {
  status: number
  body: any
}

async function call(
  base: string,
  kind: string,
  method: string,
  path: string,
  { token, body, expect = [200] }: { token?: string; body?: unknown; expect?: number[] } = {},
): Promise<Res | null> {
  const headers: Record<string, string> = {}
  if (token) headers.authorization = `Token ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const t0 = performance.now()
  requests++
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
    const text = await res.text()
    const ms = performance.now() - t0
    let list = latencies.get(kind)
    if (!list) latencies.set(kind, (list = []))
    list.push(ms)
    if (!expect.includes(res.status)) {
      errors.push(`${kind}: ${method} ${path} -> ${res.status} ${text.slice(0, 200)}`)
      return null
    }
    return { status: res.status, body: text ? JSON.parse(text) : null }
  } catch (e) {
    errors.push(`${kind}: ${method} ${path} -> ${(e as Error).message}`)
    return null
  }
}

const TAGS = Array.from({ length: 30 }, (_, i) => `tag${i}`)
interface User {
  username: string
  token: string
}

async function registerUser(base: string, name: string): Promise<User | null> {
  const res = await call(base, 'register', 'POST', '/api/users', {
    body: { user: { username: name, email: `${name}@soak.example`, password: `pw-${name}-long` } },
    expect: [201],
  })
  return res ? { username: name, token: res.body.user.token } : null
}

async function worker(base: string, w: number, until: number, users: User[], shared: string[]) {
  const r = rng(SEED * 7919 + w)
  const me = users[w % users.length]!
  const scratch: string[] = [] // my own articles that nobody else touches: safe to delete
  const comments: { slug: string; id: number }[] = []
  let n = 0
  const enc = encodeURIComponent
  while (Date.now() < until) {
    n++
    const roll = r.next()
    const other = r.pick(users)
    const slug = r.pick(shared)
    if (roll < 0.18) {
      const filter = r.pick([
        '',
        `tag=${r.pick(TAGS)}`,
        `author=${enc(other.username)}`,
        `favorited=${enc(other.username)}`,
        `tag=${r.pick(TAGS)}&tag=${r.pick(TAGS)}`,
      ])
      const q = [filter, `limit=${r.int(1, 50)}`, `offset=${r.int(0, 200)}`].filter(Boolean).join('&')
      await call(base, 'list', 'GET', `/api/articles?${q}`, r.next() < 0.5 ? { token: me.token } : {})
    } else if (roll < 0.3) {
      await call(base, 'article', 'GET', `/api/articles/${enc(slug)}`, r.next() < 0.5 ? { token: me.token } : {})
    } else if (roll < 0.38) {
      await call(base, 'comments', 'GET', `/api/articles/${enc(slug)}/comments`, r.next() < 0.5 ? { token: me.token } : {})
    } else if (roll < 0.44) {
      await call(base, 'tags', 'GET', '/api/tags')
    } else if (roll < 0.5) {
      await call(base, 'profile', 'GET', `/api/profiles/${enc(other.username)}`, { token: me.token })
    } else if (roll < 0.56) {
      await call(base, 'feed', 'GET', `/api/articles/feed?limit=${r.int(1, 20)}`, { token: me.token })
    } else if (roll < 0.6) {
      await call(base, 'user', 'GET', '/api/user', { token: me.token })
    } else if (roll < 0.68) {
      const res = await call(base, 'create', 'POST', '/api/articles', {
        token: me.token,
        body: {
          article: {
            title: `Soak ${w} ${n} ${r.int(0, 1e6)}`,
            description: 'soak description',
            body: 'body '.repeat(r.int(1, 400)),
            tagList: [r.pick(TAGS), r.pick(TAGS)],
          },
        },
        expect: [201],
      })
      if (res) scratch.push(res.body.article.slug)
    } else if (roll < 0.76) {
      const on = r.next() < 0.6
      await call(base, on ? 'favorite' : 'unfavorite', on ? 'POST' : 'DELETE', `/api/articles/${enc(slug)}/favorite`, { token: me.token })
    } else if (roll < 0.83) {
      const res = await call(base, 'comment', 'POST', `/api/articles/${enc(slug)}/comments`, {
        token: me.token,
        body: { comment: { body: `comment ${w}/${n}` } },
        expect: [201],
      })
      if (res) comments.push({ slug, id: res.body.comment.id })
    } else if (roll < 0.86 && comments.length) {
      const c = comments.splice(r.int(0, comments.length - 1), 1)[0]!
      await call(base, 'uncomment', 'DELETE', `/api/articles/${enc(c.slug)}/comments/${c.id}`, { token: me.token, expect: [204] })
    } else if (roll < 0.9 && other.username !== me.username) {
      const on = r.next() < 0.6
      await call(base, on ? 'follow' : 'unfollow', on ? 'POST' : 'DELETE', `/api/profiles/${enc(other.username)}/follow`, {
        token: me.token,
      })
    } else if (roll < 0.93) {
      await call(base, 'update-user', 'PUT', '/api/user', {
        token: me.token,
        body: { user: { bio: `bio ${n}`, image: `https://img.soak.example/${w}/${n}.png` } },
      })
    } else if (roll < 0.96 && scratch.length) {
      await call(base, 'update-article', 'PUT', `/api/articles/${enc(r.pick(scratch))}`, {
        token: me.token,
        body: { article: { body: `updated ${n}`, tagList: [r.pick(TAGS)] } },
      })
    } else if (roll < 0.99 && scratch.length > 5) {
      const victim = scratch.splice(r.int(0, scratch.length - 1), 1)[0]!
      await call(base, 'delete-article', 'DELETE', `/api/articles/${enc(victim)}`, { token: me.token, expect: [204] })
    } else if (roll >= 0.995) {
      // the odd registration (argon2id at full cost: heavy on purpose)
      await registerUser(base, `late${w}x${n}x${SEED % 10_000}`)
    } else {
      await call(base, 'tags', 'GET', '/api/tags')
    }
  }
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const mib = (b: number) => `${(b / MIB).toFixed(1)} MiB`

async function main(): Promise<number> {
  const binary = await build()
  const port = args.port ? Number(args.port) : freePort()
  const db = join(work, 'soak.db')
  let serverOut = ''
  server = Bun.spawn({
    cmd: [binary],
    cwd: work,
    // registrations all come from 127.0.0.1: not throttled here; DATABASE_URL (PostgreSQL) when given
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: work,
      HOST,
      PORT: String(port),
      DATABASE_PATH: db,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      LOG_LEVEL: 'warn',
      REGISTRATION_THROTTLE: 'false',
      CACHE_MB: String(CACHE_MB),
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder()
    for await (const chunk of stream) serverOut = (serverOut + d.decode(chunk)).slice(-20_000)
  }
  void drain(server.stdout as ReadableStream<Uint8Array>).catch(() => {})
  void drain(server.stderr as ReadableStream<Uint8Array>).catch(() => {})
  const base = `http://${HOST}:${port}`
  const ready = Date.now() + 10_000
  for (;;) {
    if (server.exitCode !== null) throw new Error(`server exited (${server.exitCode}):\n${serverOut}`)
    const ok = await fetch(`${base}/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (Date.now() > ready) throw new Error(`server not ready within 10 s:\n${serverOut}`)
    await Bun.sleep(50)
  }
  const pid = server.pid
  const samples: { t: number; rss: number }[] = []
  const t0 = Date.now()
  const sample = () => samples.push({ t: Date.now() - t0, rss: rss(pid) })
  sample()
  const rssStart = samples[0]!.rss

  // setup: users and a shared pool of articles
  const users = (
    await Promise.all(Array.from({ length: Math.max(4, WORKERS * 2) }, (_, i) => registerUser(base, `soak${i}x${SEED % 10_000}`)))
  ).filter((u): u is User => u !== null)
  const shared: string[] = []
  for (let i = 0; i < 40; i++) {
    const u = users[i % users.length]!
    const res = await call(base, 'create', 'POST', '/api/articles', {
      token: u.token,
      body: { article: { title: `Shared ${i}`, description: 'shared', body: 'shared body', tagList: [TAGS[i % TAGS.length]!] } },
      expect: [201],
    })
    if (res) shared.push(res.body.article.slug)
  }
  if (!users.length || !shared.length) throw new Error(`setup failed: ${errors.slice(0, 5).join('\n')}`)

  console.log(`soak: ${SECONDS} s, ${WORKERS} workers, seed ${SEED}, CACHE_MB=${CACHE_MB}, server pid ${pid} on ${base}, database ${db}`)
  const loadStart = Date.now()
  const until = loadStart + SECONDS * 1000
  const sampler = setInterval(() => {
    try {
      sample()
    } catch {
      // the process is gone; noticed below
    }
  }, 2000)
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(base, w, until, users, shared)))
  clearInterval(sampler)
  const loadMs = Date.now() - loadStart
  await Bun.sleep(1000)
  const alive = server.exitCode === null
  if (alive) sample()
  // like with like: the median of the samples under load in the 10 s after the warm-up, against
  // the median of the last five samples under load (RSS swings with in-flight argon2 hashes)
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const underLoad = samples.filter((s) => s.t > loadStart - t0 && s.t <= loadStart - t0 + loadMs + 500)
  const warmFrom = loadStart - t0 + WARMUP_MS
  const baselineSamples = underLoad.filter((s) => s.t >= warmFrom && s.t < warmFrom + 10_000)
  const rssBaseline = median((baselineSamples.length ? baselineSamples : underLoad.slice(0, 1)).map((s) => s.rss))
  const rssEnd = median(underLoad.slice(-5).map((s) => s.rss))
  const rssIdle = samples.at(-1)!.rss
  const rssPeak = Math.max(...samples.map((s) => s.rss))

  // stop gracefully (bounded)
  server.kill('SIGTERM')
  const stopped = await Promise.race([server.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
  if (!stopped) server.kill('SIGKILL')
  // (on PostgreSQL the data is in the server, not in a file here)
  const dbSize = process.env.DATABASE_URL ? undefined : statSync(db).size

  // ------------------------------------------------------------------ report
  const kinds = [...latencies.keys()].sort()
  const total = kinds.reduce((n, k) => n + latencies.get(k)!.length, 0)
  console.log('')
  console.log(
    `requests: ${requests} in ${(loadMs / 1000).toFixed(1)} s of load (${Math.round(total / (loadMs / 1000))} req/s incl. setup), errors: ${errors.length}`,
  )
  console.log('')
  console.log(`${'kind'.padEnd(16)}${'count'.padStart(8)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'max ms'.padStart(10)}`)
  for (const k of kinds) {
    const xs = latencies.get(k)!
    console.log(
      `${k.padEnd(16)}${String(xs.length).padStart(8)}${pct(xs, 50).toFixed(2).padStart(10)}${pct(xs, 99).toFixed(2).padStart(10)}${Math.max(
        ...xs,
      )
        .toFixed(2)
        .padStart(10)}`,
    )
  }
  console.log('')
  console.log(
    `RSS start ${mib(rssStart)}, baseline after ${(WARMUP_MS / 1000).toFixed(0)} s warm-up ${mib(rssBaseline)}, end under load ${mib(rssEnd)}, ` +
      `idle after the load ${mib(rssIdle)}, peak ${mib(rssPeak)}; limit for the end: ${mib(growthLimit(rssBaseline))}`,
  )
  console.log(`RSS samples (MiB): ${samples.map((s) => (s.rss / MIB).toFixed(0)).join(' ')}`)
  console.log(
    `database: ${dbSize === undefined ? 'PostgreSQL' : mib(dbSize)}; server stopped ${stopped ? 'cleanly' : 'by SIGKILL'} (exit ${server.exitCode ?? server.signalCode})`,
  )

  let failed = false
  if (errors.length) {
    failed = true
    console.log(`\nFAIL: ${errors.length} errors; first ones:\n  ${errors.slice(0, 10).join('\n  ')}`)
  }
  if (!alive) {
    failed = true
    console.log(`\nFAIL: the server died during the run:\n${serverOut.slice(-3000)}`)
  }
  if (rssEnd > growthLimit(rssBaseline) || rssIdle > growthLimit(rssBaseline)) {
    failed = true
    console.log(`\nFAIL: memory grew beyond noise: end ${mib(Math.max(rssEnd, rssIdle))} > ${mib(rssBaseline)} * 1.25 + 20 MiB`)
  }
  if (!stopped || server.exitCode !== 0) {
    failed = true
    console.log(`\nFAIL: the server did not shut down cleanly on SIGTERM:\n${serverOut.slice(-3000)}`)
  }
  console.log(failed ? '\nsoak: FAILED' : '\nsoak: OK')
  return failed ? 1 : 0
}

main()
  .then(
    (code) => code,
    (e) => {
      console.error('soak: error:', e)
      server?.kill('SIGKILL')
      return 2
    },
  )
  .then((code) => {
    clearTimeout(watchdog)
    rmSync(work, { recursive: true, force: true })
    process.exit(code)
  })
