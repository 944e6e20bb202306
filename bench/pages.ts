/**
 * bun bench/pages.ts [--binary dist/conduit] [--backend sqlite|postgres] [--size 20000]
 *                    [--rounds 3] [--duration 5] [--warmup 1] [--connections 32]
 *
 * The web app's pages next to the API answers that hold the same data, under
 * load: the home page, an article page and a profile, signed out and signed
 * in, each against the API request a program would make for its main content
 * (and the one or two more a browser app would make for the whole view:
 * docs/ARCHITECTURE.md, "The web app"). Each is measured kept (the same URL
 * again: the steady state) and built (a new query parameter every request:
 * the page or answer composed from cached parts, as after a write). One
 * binary pinned to core 0 on a seeded database, wrk on core 1; rounds
 * alternate the order of the cells. Prints, per cell, the medians over the
 * rounds of req/s, the server's CPU per request and p99, the bytes of one
 * answer (headers included), and each page's CPU per request over its API
 * answer's and over the whole view's, with a 90 % interval over the rounds.
 * Then the weight of a first visit: the page and the files it loads.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, installCleanup, onCleanup, printUsage, processCpuUs, runCleanups, spawn, stop, waitForAnswer } from './proc.ts'
import { DEFAULT_PG_URL, workingDatabase } from './seed.ts'
import { median, withInterval } from './stats.ts'
import { ensureWrk, requireTaskset, runWrk, type WrkScript } from './wrk.ts'

const { values } = parseArgs({
  options: {
    binary: { type: 'string', default: 'dist/conduit' },
    backend: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string', default: DEFAULT_PG_URL },
    size: { type: 'string', default: '20000' },
    users: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '32' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
})
if (values.help) printUsage(import.meta.path)

const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp')
const RUN_DIR = join(TMP, `pages-${process.pid}`)
mkdirSync(RUN_DIR, { recursive: true })
installCleanup()
requireTaskset()
await ensureWrk()

const binary = join(RUN_DIR, 'conduit')
if (!existsSync(values.binary)) throw new Error(`${values.binary} does not exist: bun run build`)
copyFileSync(values.binary, binary)
chmodSync(binary, 0o755)
const spec = { articles: Number(values.size), users: Number(values.users), seed: 1 }
const db = await workingDatabase({ backend: values.backend, pgUrl: values['pg-url'], root: ROOT, binary, tmp: TMP, dir: RUN_DIR, spec })

const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t0 = performance.now()
const server = spawn([binary], { core: 0, env: { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db, LOG_LEVEL: 'warn' } })
onCleanup(() => stop(server))
await waitForAnswer(`${base}/ready`, t0, server)

// ------------------------------------------------------------------ what is measured
const api = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(base + path, init)
  if (!res.ok) throw new Error(`${path} answered ${res.status}`)
  return res.json() as Promise<any>
}
const login = await api('/api/users/login', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ user: { email: 'user1@example.com', password: 'password123' } }),
})
const token: string = login.user.token
const { articles } = await api('/api/articles?limit=1')
const slug: string = articles[0].slug
const author: string = articles[0].author.username

interface View {
  name: string
  page: string
  /** the API answer of the page's main content */
  api: string
  /** the other requests a browser app makes for the same view (the tags, the author's articles) */
  more: string[]
}
const VIEWS: View[] = [
  { name: 'home', page: '/', api: '/api/articles?limit=10&offset=0', more: ['/api/tags'] },
  {
    name: 'article',
    page: `/article/${slug}`,
    api: `/api/articles/${slug}`,
    more: [`/api/articles/${slug}/comments`],
  },
  {
    name: 'profile',
    page: `/profile/${author}`,
    api: `/api/profiles/${author}`,
    more: [`/api/articles?author=${author}&limit=10&offset=0`],
  },
]
const SIGNED = [false, true] as const

interface Cell {
  label: string
  path: string
  signedIn: boolean
  built: boolean
}
const headersFor = (signedIn: boolean, page: boolean): Record<string, string> =>
  signedIn
    ? page
      ? { Cookie: `conduit_session=${token}`, Accept: 'text/html' }
      : { Authorization: `Token ${token}` }
    : page
      ? { Accept: 'text/html' }
      : {}
const scriptFor = (c: Cell): WrkScript => {
  const page = !c.path.startsWith('/api/')
  if (!c.built) return { kind: 'fixed', method: 'GET', path: c.path, headers: headersFor(c.signedIn, page) }
  // a new URL every request: `?uncached=<n>` (a parameter no route reads) is a new key of the page cache
  const path = c.path.includes('?') ? c.path : `${c.path}?`
  return { kind: 'unique', path, token: '', headers: headersFor(c.signedIn, page) }
}
const cells: Cell[] = []
for (const signedIn of SIGNED)
  for (const v of VIEWS)
    for (const built of [false, true]) {
      const who = signedIn ? 'signed in' : 'signed out'
      const how = built ? 'built' : 'kept'
      cells.push({ label: `${v.name} page, ${who}, ${how}`, path: v.page, signedIn, built })
      cells.push({ label: `${v.name} api, ${who}, ${how}`, path: v.api, signedIn, built })
      if (!built) for (const m of v.more) cells.push({ label: `${v.name} more ${m}, ${who}`, path: m, signedIn, built })
    }

interface Measure {
  rps: number
  cpuUs: number
  p99: number
  bytes: number
}
const results = new Map<string, Measure[]>()
const duration = Number(values.duration)
const warmup = Number(values.warmup)
const connections = Number(values.connections)
for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? cells : [...cells].reverse()
  for (const c of order) {
    const script = scriptFor(c)
    await runWrk({ base, script, durationS: warmup, connections, core: 1, tmpDir: RUN_DIR, phase: 'w' })
    const cpu0 = processCpuUs(server.pid)
    const r = await runWrk({ base, script, durationS: duration, connections, core: 1, tmpDir: RUN_DIR, phase: 'm' })
    const cpuUs = (processCpuUs(server.pid) - cpu0) / Math.max(1, r.requests)
    if (r.errorCount > 0) throw new Error(`${c.label}: ${r.errorCount} errors (${JSON.stringify(r.errors)})`)
    const m = { rps: r.rps, cpuUs, p99: r.latencyMs.p99, bytes: r.bytes / Math.max(1, r.requests) }
    const list = results.get(c.label) ?? []
    list.push(m)
    results.set(c.label, list)
    console.log(
      `round ${round + 1} ${c.label.padEnd(64)} ${m.rps.toFixed(0).padStart(7)} req/s ${m.cpuUs.toFixed(1).padStart(6)} µs/req p99 ${m.p99.toFixed(2)} ms`,
    )
  }
}

// ------------------------------------------------------------------ report
const med = (label: string, k: keyof Measure) => median(results.get(label)!.map((m) => m[k]))
console.log(
  `\n${values.backend}, ${spec.articles.toLocaleString('en')} articles, ${connections} connections, ${values.rounds} rounds of ${duration} s (medians)`,
)
console.log(`| cell | req/s | CPU µs/req | p99 ms | bytes |`)
console.log(`|---|---:|---:|---:|---:|`)
for (const c of cells)
  console.log(
    `| ${c.label} | ${med(c.label, 'rps').toFixed(0)} | ${med(c.label, 'cpuUs').toFixed(1)} | ${med(c.label, 'p99').toFixed(2)} | ${med(c.label, 'bytes').toFixed(0)} |`,
  )
console.log(`\nCPU per request, page / its API answer, and page / the whole view a browser app asks for (kept), 90 % interval over rounds`)
console.log(`| view | kept: page / API | built: page / API | kept: page / view's API requests |`)
console.log(`|---|---:|---:|---:|`)
for (const signedIn of SIGNED)
  for (const v of VIEWS) {
    const who = signedIn ? 'signed in' : 'signed out'
    const per = (a: string, b: string[]) =>
      results.get(a)!.map((m, i) => m.cpuUs / b.reduce((sum, l) => sum + results.get(l)![i]!.cpuUs, 0))
    const kept = per(`${v.name} page, ${who}, kept`, [`${v.name} api, ${who}, kept`])
    const built = per(`${v.name} page, ${who}, built`, [`${v.name} api, ${who}, built`])
    const view = per(`${v.name} page, ${who}, kept`, [`${v.name} api, ${who}, kept`, ...v.more.map((m) => `${v.name} more ${m}, ${who}`)])
    console.log(`| ${v.name}, ${who} | ${withInterval(kept)} | ${withInterval(built)} | ${withInterval(view)} |`)
  }

// the weight of a first visit: the page, then the files it links (each fetched once; a browser keeps them)
console.log(`\nFirst visit, bytes of the bodies (no compression)`)
for (const v of VIEWS) {
  const html = await (await fetch(base + v.page, { headers: { accept: 'text/html' } })).text()
  const files = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!)
  let filesBytes = 0
  for (const f of new Set(files)) filesBytes += (await (await fetch(base + f.replace(/&amp;/g, '&'))).arrayBuffer()).byteLength
  const json = await Promise.all([v.api, ...v.more].map(async (p) => (await (await fetch(base + p)).arrayBuffer()).byteLength))
  console.log(
    `${v.name}: page ${Buffer.byteLength(html)} B, its files ${filesBytes} B (${new Set(files).size}); the same data as JSON ${json.reduce((a, b) => a + b, 0)} B (${json.length} requests)`,
  )
}
await runCleanups()
process.exit(0)
