/**
 * bun bench/stall.ts [--articles 1000000] [--users 1000] [--seconds 4] [--attackers 4]
 *                    [--limit-ms 50] [--skip-build] [--help]
 *
 * How long can one anonymous request hold the server's event loop? Seeds (or
 * reuses, like `bun run bench`) a SQLite database, starts the compiled binary
 * on a working copy, and for each kind of expensive request sends a stream of
 * them (every URL different, so nothing is answered from a cache) from a few
 * clients at once, while one more client asks `/health` again and again. A
 * request that blocked the event loop for X ms makes a `/health` answer wait
 * about X ms: the probe's worst time, less its worst time when idle, bounds
 * what any one request held the loop for. Prints a table; exits 1 when a
 * probe waited over --limit-ms (default 50) beyond the idle worst case.
 *
 * SQLite only: on PostgreSQL the queries run in the database server and the
 * event loop only waits for their answers.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, installCleanup, onCleanup, printUsage, run, runCleanups, spawn, stop, waitForAnswer } from './proc.ts'
import { seededDatabase, workingCopy } from './seed.ts'

const { values } = parseArgs({
  options: {
    articles: { type: 'string', default: '1000000' },
    users: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '4' },
    attackers: { type: 'string', default: '4' },
    'limit-ms': { type: 'string', default: '50' },
    'skip-build': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
})
if (values.help) printUsage(import.meta.path)
const ARTICLES = Number(values.articles)
const SECONDS = Number(values.seconds)
const ATTACKERS = Number(values.attackers)
const LIMIT_MS = Number(values['limit-ms'])

const ROOT = resolve(import.meta.dir, '..')
const BINARY = join(ROOT, 'dist/conduit')
const TMP = join(ROOT, 'bench/tmp')
const RUN_DIR = join(TMP, `stall-${process.pid}`)

installCleanup()
if (!values['skip-build'] || !existsSync(BINARY)) {
  const b = await run([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
  if (b.code !== 0) throw new Error('build failed')
}
mkdirSync(RUN_DIR, { recursive: true })
onCleanup(async () => rmSync(RUN_DIR, { recursive: true, force: true }))
const seeded = await seededDatabase(ROOT, BINARY, TMP, { articles: ARTICLES, users: Number(values.users), seed: 1 })
const db = workingCopy(seeded.file, join(RUN_DIR, 'conduit.db'))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t0 = performance.now()
const server = spawn([BINARY], { env: { PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: db, LOG_LEVEL: 'warn' } })
onCleanup(() => stop(server))
await waitForAnswer(`${base}/ready`, t0, server)

const get = async (path: string) => {
  const res = await fetch(base + path)
  await res.arrayBuffer()
  return res.status
}
const json = async (path: string) => (await fetch(base + path)).json() as Promise<any>

// what the filters name: the most used tags, the authors of the newest articles, users who favorited
const tags: string[] = (await json('/api/tags')).tags.slice(0, 10)
const newest = (await json('/api/articles?limit=100')).articles as { author: { username: string } }[]
const authors = [...new Set(newest.map((a) => a.author.username))].slice(0, 10)
const total: number = (await json('/api/articles?limit=1')).articlesCount
const q = (name: string, vs: string[]) => vs.map((v) => `${name}=${encodeURIComponent(v)}`).join('&')

/** Limit and offset of the i-th request of a kind: never the same pair twice, so nothing comes from a cache. */
const page = (i: number, from: number) => `limit=${20 + (i % 30)}&offset=${from + Math.floor(i / 30)}`
const kinds: { name: string; url: (i: number) => string }[] = [
  { name: 'deep offset, no filter', url: (i) => `/api/articles?${page(i, Math.max(0, total - 60_000))}` },
  { name: 'offset past the end', url: (i) => `/api/articles?${page(i, total)}` },
  { name: '10 tags, first pages', url: (i) => `/api/articles?${q('tag', tags)}&${page(i, 0)}` },
  { name: '10 tags, deep offsets', url: (i) => `/api/articles?${q('tag', tags)}&${page(i, Math.floor(total / 20))}` },
  { name: '10 authors, deep offsets', url: (i) => `/api/articles?${q('author', authors)}&${page(i, 500)}` },
  {
    name: 'tag + author + favorited',
    url: (i) =>
      `/api/articles?tag=${encodeURIComponent(tags[i % tags.length]!)}&author=${encodeURIComponent(authors[i % authors.length]!)}&favorited=${encodeURIComponent(authors[(i + 1) % authors.length]!)}&${page(i, 0)}`,
  },
  { name: '100 per page, deep', url: (i) => `/api/articles?limit=100&offset=${Math.max(0, total - 100 - i)}` },
]

interface Probe {
  n: number
  p50: number
  p99: number
  max: number
}
/** Asks /health back to back until `until`; its answer times. */
async function probe(until: number): Promise<Probe> {
  const times: number[] = []
  while (performance.now() < until) {
    const t = performance.now()
    await get('/health')
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0
  return { n: times.length, p50: at(0.5), p99: at(0.99), max: times.at(-1) ?? 0 }
}

async function attack(kind: (typeof kinds)[number], until: number) {
  let i = 0
  const lat: number[] = []
  const statuses = new Map<number, number>()
  await Promise.all(
    Array.from({ length: ATTACKERS }, async () => {
      while (performance.now() < until) {
        const t = performance.now()
        const s = await get(kind.url(i++))
        lat.push(performance.now() - t)
        statuses.set(s, (statuses.get(s) ?? 0) + 1)
      }
    }),
  )
  lat.sort((a, b) => a - b)
  return { n: lat.length, p50: lat[Math.floor(lat.length / 2)] ?? 0, max: lat.at(-1) ?? 0, statuses }
}

const f = (ms: number) => ms.toFixed(1).padStart(7)
console.log(
  `\nstall: ${total.toLocaleString('en')} articles (SQLite), ${ATTACKERS} clients per kind for ${SECONDS} s, /health asked back to back meanwhile\n`,
)
const idle = await probe(performance.now() + SECONDS * 1000)
console.log(`idle probe: ${idle.n} answers, p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms, max ${idle.max.toFixed(1)} ms\n`)
console.log('| kind | requests | req p50 ms | req max ms | statuses | probe p99 ms | probe max ms | held beyond idle ms |')
console.log('|---|---:|---:|---:|---|---:|---:|---:|')
let worst = 0
for (const kind of kinds) {
  const until = performance.now() + SECONDS * 1000
  const [a, p] = await Promise.all([attack(kind, until), probe(until)])
  const held = Math.max(0, p.max - idle.max)
  worst = Math.max(worst, held)
  const st = [...a.statuses].map(([s, n]) => `${s}×${n}`).join(' ')
  console.log(`| ${kind.name} | ${a.n} | ${f(a.p50)} | ${f(a.max)} | ${st} | ${f(p.p99)} | ${f(p.max)} | ${f(held)} |`)
}
console.log(`\nworst wait of /health beyond idle: ${worst.toFixed(1)} ms (limit ${LIMIT_MS} ms)`)
await runCleanups()
process.exit(worst > LIMIT_MS ? 1 : 0)
