/**
 * bun bench/tail.ts [--binary dist/conduit] [--backend sqlite|postgres] [--variant mix-1]
 *                   [--size 20000] [--duration 10] [--warmup 2] [--connections 64]
 *
 * Where the slowest requests spend their time. Starts the binary pinned to
 * core 0 with TAIL_TRACE (src/trace.ts) on a copy of the seeded database,
 * drives it with the mixed traffic from wrk on core 1, each request stamped
 * with when it was sent, stops it, and reads the trace: the event loop's
 * slices whose cause the service knows, and each request's times. For every
 * request of the measured run its latency (answer ready - sent) is split
 * into the loop's time in each kind of slice during it (its own work on
 * arrival apart), and the rest: what no slice covers (HTTP parsing and
 * writing, the framework's steps after an await, garbage collection, or the
 * loop idle while the request waited for the database or the list worker).
 * Prints the mean split for all requests and for the slowest 1 %, and the
 * slices' lengths by kind. `--gc`: the server also logs JavaScriptCore's
 * collections (BUN_JSC_logGC), and their pauses in the measured run are
 * summed (a pause falls in no slice, or lengthens the one it interrupts).
 * `--save-trace FILE` keeps the trace (it is removed with the run's files).
 * `--helpers-core N` (an experiment): after the warm-up, every thread of the
 * server but the main one moves to core N, so none takes core 0 from it.
 * docs/PERFORMANCE.md, "The tail".
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { REQUEST_KINDS, SLICE_NAMES } from '../src/trace.ts'
import { discover, type EndpointName, endpoints } from './endpoints.ts'
import {
  freePort,
  installCleanup,
  onCleanup,
  printUsage,
  processCpuUs,
  rssSampler,
  runCleanups,
  spawn,
  stop,
  waitForAnswer,
} from './proc.ts'
import { DEFAULT_PG_URL, workingDatabase } from './seed.ts'
import { ensureWrk, requireTaskset, runWrk } from './wrk.ts'

const { values } = parseArgs({
  options: {
    binary: { type: 'string', default: 'dist/conduit' },
    backend: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string', default: DEFAULT_PG_URL },
    variant: { type: 'string', default: 'mix-1' },
    size: { type: 'string', default: '20000' },
    users: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    gc: { type: 'boolean', default: false },
    'helpers-core': { type: 'string' },
    'save-trace': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
})
if (values.help) printUsage(import.meta.path)
if (values.backend !== 'sqlite' && values.backend !== 'postgres') throw new Error('--backend must be sqlite or postgres')

const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp')
const RUN_DIR = join(TMP, `tail-${process.pid}`)
installCleanup()
requireTaskset()
await ensureWrk()
mkdirSync(RUN_DIR, { recursive: true })
onCleanup(async () => rmSync(RUN_DIR, { recursive: true, force: true }))
if (!existsSync(values.binary)) throw new Error(`${values.binary} does not exist: bun run build`)
const binary = join(RUN_DIR, 'conduit')
copyFileSync(values.binary, binary)
chmodSync(binary, 0o755)

const spec = { articles: Number(values.size), users: Number(values.users), seed: 1 }
const db = await workingDatabase({ backend: values.backend, pgUrl: values['pg-url'], root: ROOT, binary, tmp: TMP, dir: RUN_DIR, spec })

const traceFile = join(RUN_DIR, 'conduit.trace')
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t0 = performance.now()
const server = spawn([binary], {
  core: 0,
  env: {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: db,
    LOG_LEVEL: 'warn',
    JWT_SECRET: 'bench-tail-signing-secret-of-at-least-32-characters',
    TAIL_TRACE: traceFile,
    ...(values.gc ? { BUN_JSC_logGC: '1' } : {}),
  },
  ...(values.gc ? { stderr: 'pipe' as const } : {}),
})
// the collector's log, read as it comes; `gcFrom` marks where the measured run began
let gcLog = ''
const gcEnds: number[] = []
let gcFrom = 0
const gcRead = values.gc
  ? (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of server.stderr as ReadableStream<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true })
        gcLog += text
        // when each collection's end was read (epoch ms): to tell which long gaps a collection falls in
        for (const _ of text.matchAll(/GC END!/g)) gcEnds.push(performance.timeOrigin + performance.now())
      }
    })()
  : undefined
const rss = rssSampler(server.pid, 100)
/** CPU time of each of the server's threads by name (µs): the main thread shares core 0 with its helpers. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${server.pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${server.pid}/task/${tid}/stat`, 'utf8')
      const name = tid === String(server.pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(name, (out.get(name) ?? 0) + (Number(rest[11]) + Number(rest[12])) * 10_000)
    } catch {
      // the thread ended
    }
  }
  return out
}
/** Core 0's time by state from /proc/stat (ms): what besides the server's threads took it. */
function core0(): Record<string, number> {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('cpu0 '))!
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .split(/\s+/)
    .slice(1)
    .map((x) => Number(x) * 10)
  return { user: user! + nice!, system: system!, idle: idle! + iowait!, irq: irq!, softirq: softirq!, steal: steal! }
}
/** CPU time (ms) of the kernel's softirq thread for core 0, which runs when the interrupts' own share is spent. */
function ksoftirqd0(): number {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (!stat.includes('(ksoftirqd/0)')) continue
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return (Number(rest[11]) + Number(rest[12])) * 10
    } catch {}
  }
  return Number.NaN
}
let cores0 = core0()
let cores1 = cores0
let soft0 = 0
let soft1 = 0
let threads0 = new Map<string, number>()
let threads1 = new Map<string, number>()
let measuredFrom = 0
let wrkResult: Awaited<ReturnType<typeof runWrk>>
let cpuUs = 0
try {
  await waitForAnswer(`${base}/ready`, t0, server)
  const fixture = await discover(base, RUN_DIR, spec.users, { mix: true, seed: 1 })
  const e = endpoints(fixture).find((x) => x.name === (values.variant as EndpointName))
  if (e?.script.kind !== 'mix') throw new Error(`--variant must be a mix (mix-0, mix-1, mix-5), got ${values.variant}`)
  const script = { ...e.script, stamp: true }
  const common = { base, script, connections: Number(values.connections), core: 1, tmpDir: RUN_DIR }
  await runWrk({ ...common, durationS: Number(values.warmup), phase: 'w' })
  if (values['helpers-core'] !== undefined) {
    // an experiment: the server's other threads (JIT, allocator, collector, workers) moved off the main thread's core
    for (const tid of readdirSync(`/proc/${server.pid}/task`))
      if (tid !== String(server.pid)) Bun.spawnSync(['taskset', '-p', '-c', values['helpers-core'], tid], { stdout: 'ignore' })
  }
  rss.resetWindow()
  measuredFrom = Date.now()
  gcFrom = gcLog.length
  const cpu0 = processCpuUs(server.pid)
  threads0 = threadCpu()
  cores0 = core0()
  soft0 = ksoftirqd0()
  wrkResult = await runWrk({ ...common, durationS: Number(values.duration), phase: 'm' })
  cpuUs = processCpuUs(server.pid) - cpu0
  threads1 = threadCpu()
  cores1 = core0()
  soft1 = ksoftirqd0()
  gcLog = gcLog.slice(gcFrom, gcLog.length)
} finally {
  rss.stop()
  await stop(server, 30_000)
}
if (!existsSync(traceFile)) throw new Error('the server wrote no trace (did it stop cleanly?)')
if (values['save-trace']) copyFileSync(traceFile, values['save-trace'])

// the trace: [slices, requests, timeOrigin], then slices (start, end, kind), then requests (sent, arrived, done, own, kind)
const f = new Float64Array(readFileSync(traceFile).buffer.slice(0))
const [sliceCount, requestCount, origin] = [f[0]!, f[1]!, f[2]!]
const slices = f.subarray(3, 3 + sliceCount * 3)
const requests = f.subarray(3 + sliceCount * 3, 3 + sliceCount * 3 + requestCount * 5)
const from = measuredFrom - origin

/**
 * The slices made flat: where one ran inside another (a write inside a
 * request's arrival), the inner one owns its time. Segments in time order.
 */
function flatten(): { start: Float64Array; end: Float64Array; kind: Uint8Array; n: number } {
  const order = Array.from({ length: sliceCount }, (_, i) => i).sort((a, b) => slices[a * 3]! - slices[b * 3]!)
  const start = new Float64Array(sliceCount * 2 + 1)
  const end = new Float64Array(sliceCount * 2 + 1)
  const kind = new Uint8Array(sliceCount * 2 + 1)
  let n = 0
  const push = (s: number, e: number, k: number) => {
    if (e <= s) return
    start[n] = s
    end[n] = e
    kind[n] = k
    n++
  }
  // the open slices, outermost first; each resumes where its inner one ended
  const stack: { end: number; kind: number; from: number }[] = []
  const closeUntil = (t: number) => {
    while (stack.length && stack[stack.length - 1]!.end <= t) {
      const top = stack.pop()!
      push(top.from, top.end, top.kind)
      if (stack.length) stack[stack.length - 1]!.from = top.end
    }
  }
  for (const i of order) {
    const s = slices[i * 3]!
    closeUntil(s)
    if (stack.length) {
      const outer = stack[stack.length - 1]!
      push(outer.from, s, outer.kind)
    }
    stack.push({ end: slices[i * 3 + 1]!, kind: slices[i * 3 + 2]!, from: s })
  }
  closeUntil(Number.POSITIVE_INFINITY)
  return { start, end, kind, n }
}
const flat = flatten()

/** The first segment that ends after t. */
function firstEndingAfter(t: number): number {
  let lo = 0
  let hi = flat.n
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (flat.end[mid]! <= t) lo = mid + 1
    else hi = mid
  }
  return lo
}

const KINDS = SLICE_NAMES.length
interface Split {
  latency: number
  beforeJs: number
  own: number
  byKind: number[]
  untracked: number
  writesInWindow: number
  /** the longest single stretch of the loop inside the window: a slice's kind, or KINDS for a gap between slices */
  longest: { kind: number; ms: number }
}
function split(r: number): Split {
  const sent = requests[r * 5]!
  const arrived = requests[r * 5 + 1]!
  const done = requests[r * 5 + 2]!
  const own = requests[r * 5 + 3]!
  const byKind = new Array<number>(KINDS).fill(0)
  let writes = 0
  const longest: { kind: number; ms: number } = { kind: KINDS, ms: 0 }
  const first = firstEndingAfter(sent)
  for (let i = first; i < flat.n && flat.start[i]! < done; i++) {
    const overlap = Math.min(done, flat.end[i]!) - Math.max(sent, flat.start[i]!)
    if (overlap > 0) byKind[flat.kind[i]!]! += overlap
    if (flat.kind[i] === 2) writes++
    // its own arrival slice is not a stall it waited behind
    const mine = flat.kind[i] === 0 && flat.start[i]! >= arrived && flat.start[i]! < arrived + own + 1e-6
    if (!mine && overlap > longest.ms) {
      longest.kind = flat.kind[i]!
      longest.ms = overlap
    }
    if (i > first) {
      const gap = Math.min(done, flat.start[i]!) - Math.max(sent, flat.end[i - 1]!)
      if (gap > longest.ms) {
        longest.kind = KINDS
        longest.ms = gap
      }
    }
  }
  // its own arrival is not time it waited behind others
  byKind[0] = Math.max(0, byKind[0]! - own)
  const latency = done - sent
  const tracked = byKind.reduce((a, b) => a + b, 0) + own
  return { latency, beforeJs: arrived - sent, own, byKind, untracked: Math.max(0, latency - tracked), writesInWindow: writes, longest }
}

const measured: number[] = []
for (let r = 0; r < requestCount; r++) {
  const sent = requests[r * 5]!
  if (Number.isFinite(sent) && sent >= from) measured.push(r)
}
if (measured.length < 100) throw new Error(`only ${measured.length} stamped requests in the trace`)
measured.sort((a, b) => requests[a * 5 + 2]! - requests[a * 5]! - (requests[b * 5 + 2]! - requests[b * 5]!))
const slowest = measured.slice(Math.floor(measured.length * 0.99))
const everyOne = measured.filter((_, i) => i % Math.max(1, Math.floor(measured.length / 20_000)) === 0)

function mean(rs: number[]) {
  const m = { latency: 0, beforeJs: 0, own: 0, byKind: new Array<number>(KINDS).fill(0), untracked: 0, writesInWindow: 0, writes: 0 }
  for (const r of rs) {
    const s = split(r)
    m.latency += s.latency
    m.beforeJs += s.beforeJs
    m.own += s.own
    m.untracked += s.untracked
    m.writesInWindow += s.writesInWindow
    m.writes += requests[r * 5 + 4]! > 0 ? 1 : 0
    for (let k = 0; k < KINDS; k++) m.byKind[k]! += s.byKind[k]!
  }
  const n = Math.max(1, rs.length)
  return {
    latency: m.latency / n,
    beforeJs: m.beforeJs / n,
    own: m.own / n,
    byKind: m.byKind.map((x) => x / n),
    untracked: m.untracked / n,
    writesInWindow: m.writesInWindow / n,
    writeShare: m.writes / n,
  }
}

const latencies = measured.map((r) => requests[r * 5 + 2]! - requests[r * 5]!)
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!
const all = mean(everyOne)
const slow = mean(slowest)
const ms = (x: number) => `${x.toFixed(2)} ms`
const share = (x: number, of: number) => `${((100 * x) / of).toFixed(0)} %`

console.log(
  `\n${values.variant} at ${spec.articles.toLocaleString('en')} articles on ${values.backend}, ${values.connections} connections, ${values.duration} s`,
)
console.log(
  `wrk: ${Math.round(wrkResult!.rps).toLocaleString('en')} req/s, p50 ${wrkResult!.latencyMs.p50.toFixed(2)} ms, p99 ${wrkResult!.latencyMs.p99.toFixed(2)} ms; ` +
    `server CPU ${(cpuUs / Math.max(1, wrkResult!.requests)).toFixed(1)} µs/request; peak RSS ${(rss.windowPeak() / 2 ** 20).toFixed(0)} MiB (trace arrays included)`,
)
console.log(
  `trace: ${measured.length.toLocaleString('en')} requests sent in the measured run; sent to answer ready: p50 ${ms(pct(latencies, 0.5))}, p99 ${ms(pct(latencies, 0.99))}, max ${ms(latencies[latencies.length - 1]!)}`,
)
console.log('\nWhere a request waited, mean per request (sent to answer ready):')
console.log(`| | all requests | slowest 1 % |`)
console.log(`|---|---:|---:|`)
console.log(`| latency | ${ms(all.latency)} | ${ms(slow.latency)} |`)
for (let k = 0; k < KINDS; k++)
  console.log(
    `| others' ${SLICE_NAMES[k]} | ${ms(all.byKind[k]!)} (${share(all.byKind[k]!, all.latency)}) | ${ms(slow.byKind[k]!)} (${share(slow.byKind[k]!, slow.latency)}) |`,
  )
console.log(
  `| its own work on arrival | ${ms(all.own)} (${share(all.own, all.latency)}) | ${ms(slow.own)} (${share(slow.own, slow.latency)}) |`,
)
console.log(
  `| no slice: HTTP, framework after an await, GC, or waiting on I/O | ${ms(all.untracked)} (${share(all.untracked, all.latency)}) | ${ms(slow.untracked)} (${share(slow.untracked, slow.latency)}) |`,
)
console.log(`| of it before JavaScript saw the request | ${ms(all.beforeJs)} | ${ms(slow.beforeJs)} |`)
console.log(`| writes run during it (count) | ${all.writesInWindow.toFixed(2)} | ${slow.writesInWindow.toFixed(2)} |`)
console.log(`| is a write itself | ${(100 * all.writeShare).toFixed(1)} % | ${(100 * slow.writeShare).toFixed(1)} % |`)

console.log('\nLatency by kind of request (the slowest 1 %: how many of them are of the kind):')
console.log('| request | count | p50 | p99 | max | of the slowest 1 % |')
console.log('|---|---:|---:|---:|---:|---:|')
const slowKinds = new Array<number>(REQUEST_KINDS.length).fill(0)
for (const r of slowest) slowKinds[requests[r * 5 + 4]!]!++
REQUEST_KINDS.forEach((name, k) => {
  // `measured` is sorted by latency: each kind's latencies come out sorted too
  const ls = measured.filter((r) => requests[r * 5 + 4] === k).map((r) => requests[r * 5 + 2]! - requests[r * 5]!)
  if (!ls.length) return
  console.log(
    `| ${name} | ${ls.length} | ${ms(pct(ls, 0.5))} | ${ms(pct(ls, 0.99))} | ${ms(ls[ls.length - 1]!)} | ${share(slowKinds[k]!, slowest.length)} |`,
  )
})

console.log("\nThe loop's slices in the measured run, by kind:")
console.log('| kind | count | total | p50 | p99 | max |')
console.log('|---|---:|---:|---:|---:|---:|')
for (let k = 0; k < KINDS; k++) {
  const lengths: number[] = []
  for (let i = 0; i < sliceCount; i++)
    if (slices[i * 3 + 2] === k && slices[i * 3]! >= from) lengths.push(slices[i * 3 + 1]! - slices[i * 3]!)
  lengths.sort((a, b) => a - b)
  if (!lengths.length) continue
  const total = lengths.reduce((a, b) => a + b, 0)
  console.log(
    `| ${SLICE_NAMES[k]} | ${lengths.length.toLocaleString('en')} | ${total.toFixed(0)} ms | ${(pct(lengths, 0.5) * 1000).toFixed(0)} µs | ${(pct(lengths, 0.99) * 1000).toFixed(0)} µs | ${ms(lengths[lengths.length - 1]!)} |`,
  )
}
// gaps between slices: the loop outside any traced slice (untracked work, GC, or idle)
const gaps: number[] = []
for (let i = 1; i < flat.n; i++) if (flat.start[i]! >= from) gaps.push(flat.start[i]! - flat.end[i - 1]!)
gaps.sort((a, b) => a - b)
if (gaps.length)
  console.log(
    `| (between slices) | ${gaps.length.toLocaleString('en')} | ${gaps.reduce((a, b) => a + b, 0).toFixed(0)} ms | ${(pct(gaps, 0.5) * 1000).toFixed(0)} µs | ${(pct(gaps, 0.99) * 1000).toFixed(0)} µs | ${ms(gaps[gaps.length - 1]!)} |`,
  )
// long gaps between slices (> 1 ms), by the slice that ran just before: what they follow
{
  const after = new Array<{ n: number; ms: number }>(KINDS).fill({ n: 0, ms: 0 }).map(() => ({ n: 0, ms: 0 }))
  for (let i = 1; i < flat.n; i++) {
    const gap = flat.start[i]! - flat.end[i - 1]!
    if (flat.start[i]! < from || gap <= 1) continue
    after[flat.kind[i - 1]!]!.n++
    after[flat.kind[i - 1]!]!.ms += gap
  }
  if (values.gc) {
    // a collection's end read within the gap (or 2 ms after it): the gap held a collection
    let withGc = 0
    let gcMs = 0
    let all = 0
    const ends = gcEnds.map((t) => t - origin)
    for (let i = 1; i < flat.n; i++) {
      const gap = flat.start[i]! - flat.end[i - 1]!
      if (flat.start[i]! < from || gap <= 1) continue
      all++
      if (ends.some((t) => t >= flat.end[i - 1]! && t <= flat.start[i]! + 2)) {
        withGc++
        gcMs += gap
      }
    }
    console.log(`\nGaps over 1 ms with a collection ending in them: ${withGc} of ${all} (${gcMs.toFixed(0)} ms)`)
  }
  console.log('\nGaps over 1 ms between slices, by the slice just before')
  console.log('| just before | gaps | total | mean |')
  console.log('|---|---:|---:|---:|')
  for (let k = 0; k < KINDS; k++)
    if (after[k]!.n)
      console.log(`| ${SLICE_NAMES[k]} | ${after[k]!.n} | ${after[k]!.ms.toFixed(0)} ms | ${ms(after[k]!.ms / after[k]!.n)} |`)
}

// what the slowest requests waited behind most: the longest single stall in each one's window
const stalls = new Array<{ n: number; ms: number }>(KINDS + 1).fill({ n: 0, ms: 0 }).map(() => ({ n: 0, ms: 0 }))
for (const r of slowest) {
  const { longest } = split(r)
  stalls[longest.kind]!.n++
  stalls[longest.kind]!.ms += longest.ms
}
console.log('\nThe slowest 1 %: the longest single stall of the loop while each waited')
console.log('| stall | requests | its mean length |')
console.log('|---|---:|---:|')
for (let k = 0; k <= KINDS; k++) {
  const x = stalls[k]!
  if (x.n)
    console.log(`| ${k === KINDS ? 'between slices (no slice)' : SLICE_NAMES[k]} | ${share(x.n, slowest.length)} | ${ms(x.ms / x.n)} |`)
}

console.log("\nCPU time of the server's threads in the measured run (all on core 0, so each helper takes the core from the main thread)")
console.log('| thread | CPU | % of the run |')
console.log('|---|---:|---:|')
for (const [name, after] of [...threads1].sort((a, b) => b[1] - a[1])) {
  const used = after - (threads0.get(name) ?? 0)
  if (used > 0)
    console.log(`| ${name} | ${(used / 1000).toFixed(0)} ms | ${((100 * used) / (1e6 * Number(values.duration))).toFixed(1)} % |`)
}

const runMs = 1000 * Number(values.duration)
console.log(
  `core 0 in the measured run: ${Object.keys(cores1)
    .map((k) => `${k} ${((100 * (cores1[k]! - cores0[k]!)) / runMs).toFixed(1)} %`)
    .join(', ')}; ksoftirqd/0 ${(soft1 - soft0).toFixed(0)} ms`,
)

if (gcRead) {
  const collections = { eden: 0, full: 0 }
  for (const m of gcLog.matchAll(/=> (Eden|Full)Collection/g)) m[1] === 'Eden' ? collections.eden++ : collections.full++
  const pauses = [...gcLog.matchAll(/ p=([0-9.]+)ms/g)].map((m) => Number(m[1])).sort((a, b) => a - b)
  const total = pauses.reduce((a, b) => a + b, 0)
  console.log(
    `\nGarbage collection in the measured run (BUN_JSC_logGC): ${collections.eden} eden and ${collections.full} full collections, ` +
      `${pauses.length} pauses, ${total.toFixed(0)} ms in all (${((100 * total) / (1000 * Number(values.duration))).toFixed(1)} % of the run), ` +
      `p50 ${pauses.length ? pct(pauses, 0.5).toFixed(2) : 0} ms, p99 ${pauses.length ? pct(pauses, 0.99).toFixed(2) : 0} ms, max ${pauses.length ? pauses[pauses.length - 1]!.toFixed(2) : 0} ms`,
  )
}
await runCleanups()
process.exit(0)
