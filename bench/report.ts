/** Results: their shape, the printed tables and the issue's targets. */
import type { EndpointName, MixName } from './endpoints.ts'
import type { Machine } from './machine.ts'
import type { CoreShare } from './proc.ts'
import type { Backend } from './seed.ts'
import type { MIX, WrkResult } from './wrk.ts'

/**
 * Share of each core that other processes (or the hypervisor) took during a
 * measured run. `shared`: the system under test was not confined to the
 * server core (an unpinned PostgreSQL, instances on both cores), so both
 * figures are the same one, over both cores: their busy time less that of the
 * app, the database server, wrk and the harness, as % of one core.
 */
export interface Contention {
  serverCore: CoreShare
  loadCore: CoreShare
  shared?: boolean
}

/** One configuration of the system under test. */
export interface Variant {
  backend: Backend
  /** processes serving the port (conduit serve --workers N) */
  instances: number
  /** SINGLE_INSTANCE=true: no per-request change-log read (PostgreSQL, one instance) */
  singleInstance: boolean
  /** short name in the tables: sqlite, postgres, postgres w2, postgres SI */
  label: string
  /** one line for the report: what runs, where it is pinned */
  describe: string
}

/** The variant's fields every result row repeats. */
interface VariantFields {
  backend: Backend
  instances: number
  singleInstance: boolean
  variant: string
}

export const variantFields = (v: Variant): VariantFields => ({
  backend: v.backend,
  instances: v.instances,
  singleInstance: v.singleInstance,
  variant: v.label,
})

/**
 * % of a core lost to other processes (or the hypervisor) during a run, the
 * worse of the server core and the load core: a starved wrk is as bad as a
 * starved server.
 */
export const noise = (c: Contention) =>
  Math.round(Math.max(c.serverCore.othersPct + c.serverCore.stealPct, c.loadCore.othersPct + c.loadCore.stealPct))
/** above this share of a core taken by others, a figure is marked as disturbed */
export const NOISY_PCT = 10
/** wrk using this much of its core: the load generator, not the server, may be the limit */
const WRK_BUSY_PCT = 90

/** What a mixed-traffic variant sent and got, beyond the usual figures. */
interface MixDetail {
  /** % of all requests that were writes */
  writePct: number
  /** the response the bound answered to every request */
  boundPath: string
  /** requests sent per kind in the measured server run ("auth": reads that carried a token) */
  sent: Record<string, number>
  /** responses per status code in the server's warm-up (counting them slows wrk, so not in the measured run) */
  warmupStatuses: Record<string, number> | null
  /** socket errors (connect, read, write, timeout), warm-up included */
  socketErrors: number
  /** responses with a status > 399, warm-up included */
  statusErrors: number
}

export interface EndpointResult extends Partial<VariantFields> {
  name: EndpointName
  title: string
  kind: 'read' | 'write' | 'mix'
  /** status and size of the captured real response (what the bound answers) */
  status: number
  responseBytes: number
  /** the measured runs (the warm-ups are not kept: their errors count in `errors`, the mix's statuses in `mix`) */
  server: WrkResult
  bound: WrkResult
  /** server req/s / bound req/s */
  ratio: number
  /** how much of the cores others took during the measured server and bound runs */
  contention: { server: Contention; bound: Contention }
  /** errors of the server, warm-up included */
  errors: number
  /** peak VmRSS of the server while this endpoint ran (summed over its instances, the database server not included) */
  peakRssBytes: number
  /** CPU used during the measured run, % of one core: the app (all its instances) and the database server (all its processes) */
  cpu?: { appPct: number; dbPct: number }
  /** the variant whose captured response the bound answered (the bound is measured once per endpoint and size) */
  boundFrom?: string
  mix?: MixDetail
}

/** One line of the mixed-traffic summary: a mix variant at a size (on one system variant). */
interface MixRow extends Partial<VariantFields> {
  articles: number
  name: MixName
  writePct: number
  rps: number
  boundRps: number
  ratio: number
  p50Ms: number
  p99Ms: number
  /** mean latency of the server's run */
  meanMs: number
  /** the bound's p99 and mean latency under the same script */
  boundP99Ms: number
  boundMeanMs: number
  /** non-2xx + socket errors, warm-up included */
  errors: number
  socketErrors: number
  statusErrors: number
  warmupStatuses: Record<string, number> | null
  peakRssBytes: number
  /** % of a core other processes took during the server / the bound run */
  noisePct: [number, number]
  /** wrk's CPU during the server / the bound run */
  wrkCpuPct: [number, number]
  sent: Record<string, number>
}

export interface SizeResult {
  articles: number
  /** the system variant measured (one SizeResult per size and variant) */
  variant?: Variant
  /** the cached seed this size was copied from (file or PostgreSQL database) */
  seededFrom?: string
  seed: { cached: boolean; seconds: number }
  /** ms from spawning the binary to its first 200 on /api/articles, one per start */
  firstResponseMs: number[]
  /** peak VmRSS of the server over the whole run at this size (sampled every 200 ms) */
  peakRssBytes: number
  /** the kernel's VmHWM at the end, a cross-check of the sampled peak */
  highWaterMarkBytes: number | null
  serverLog: { lines: number; first: string[] }
  fixture: { user: string; tag: string; author: string; favoritedBy: string; slug: string; favoriteSlugs: number }
  endpoints: EndpointResult[]
}

export interface Target {
  name: string
  target: string
  value: string
  /** null: not measured in this run */
  pass: boolean | null
  /** shown for information, not one of the issue's targets (the uncached variants) */
  info?: boolean
  /** a target of the mixed traffic (printed at the top) */
  mix?: boolean
}

export interface Results {
  /** 2: sizes holds one entry per size and system variant (SizeResult.variant) */
  version: 1 | 2
  date: string
  startedAt: string
  finishedAt: string
  totalSeconds: number
  /** the mixed-traffic variants at every size, when measured */
  mix?: MixRow[]
  /** what was measured (the system under test) */
  system?: string
  /** the system variants measured, in the order they ran at each size */
  variants?: Variant[]
  options: {
    durationS: number
    warmupS: number
    connections: number
    threads: number
    users: number
    seed: number
    serverCore: number
    loadCore: number
    /** longest wait for a quiet machine before each endpoint */
    settleS: number
    /** the mixed traffic's shape */
    mix?: typeof MIX
    backends?: Backend[]
    instances?: number[]
    singleInstance?: boolean[]
    /** the PostgreSQL server (without a password), when measured */
    postgres?: string
  }
  /** time spent waiting for other processes to leave the cores */
  settledSeconds: number
  machine: Machine
  sizes: SizeResult[]
  targets: Target[]
}

const TARGET_SIZE = 100_000
const RATIO_TARGETS: Partial<Record<EndpointName, number>> = {
  list: 0.35,
  'list-auth': 0.15,
  tag: 0.15,
  author: 0.15,
  favorited: 0.15,
  feed: 0.15,
  article: 0.4,
  tags: 0.6,
  offset: 0.1,
}
const P99_MS = 15
/** the issue's targets of the mixed traffic: ratio to the bound per variant, p99 at 64 connections, no errors, RSS */
const MIX_RATIO: Record<MixName, number> = { 'mix-0': 0.35, 'mix-1': 0.25, 'mix-5': 0.15 }
const MIX_P99_MS = 10
const MIX_CONNECTIONS = 64
const CREATE_RPS = 3000
const GROWTH = 1.5
const RSS_BYTES = 150 * 1024 * 1024
const FIRST_RESPONSE_MS = 50

/**
 * A results file as `bun run bench` writes it: one line per top-level field,
 * each value on its line without indentation (indented, the figures took four
 * times the bytes and thousands of lines per run).
 */
export const resultsJson = (r: Results): string =>
  `{\n${Object.entries(r)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(',\n')}\n}\n`

export const MB = (b: number) => (b / 1024 / 1024).toFixed(1)
const int = (n: number) => Math.round(n).toLocaleString('en')
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

function table(head: string[], rows: string[][], alignLeft = 1): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (r: string[]) =>
    r
      .map((c, i) => (i < alignLeft ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

export function sizeTable(s: SizeResult): string {
  const first = s.firstResponseMs.map((x) => x.toFixed(0)).join(', ')
  const title =
    `${int(s.articles)} articles${s.variant ? ` on ${s.variant.label}` : ''} — server peak RSS ${MB(s.peakRssBytes)} MiB` +
    (s.highWaterMarkBytes ? ` (VmHWM ${MB(s.highWaterMarkBytes)} MiB)` : '') +
    `, first response ${first} ms` +
    (s.serverLog.lines ? `, ${s.serverLog.lines} server log line(s) at warn+` : '')
  const eps = s.endpoints.filter((e) => !e.mix)
  const rows = eps.map((e) => {
    const [a, b] = [noise(e.contention.server), noise(e.contention.bound)]
    const mark = (Math.max(a, b) > NOISY_PCT ? '*' : '') + (e.bound.wrkCpuPct >= WRK_BUSY_PCT ? '^' : '')
    return [
      e.name,
      int(e.server.rps),
      ms(e.server.latencyMs.p50),
      ms(e.server.latencyMs.p99),
      String(e.errors),
      int(e.bound.rps),
      e.ratio.toFixed(2) + mark,
      MB(e.peakRssBytes),
      int(e.responseBytes),
      `${a}/${b}`,
      `${Math.round(e.server.wrkCpuPct)}/${Math.round(e.bound.wrkCpuPct)}`,
    ]
  })
  const noisy = eps.some((e) => Math.max(noise(e.contention.server), noise(e.contention.bound)) > NOISY_PCT)
  const busy = eps.some((e) => e.bound.wrkCpuPct >= WRK_BUSY_PCT)
  if (!eps.length) return `${title}\n(only the mixed traffic was measured at this size)`
  const head = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'bound req/s', 'ratio', 'RSS MiB', 'resp B', 'noise %', 'wrk %']
  return (
    `${title}\n${table(head, rows)}` +
    (noisy
      ? `\n* other processes took more than ${NOISY_PCT}% of the server or the load core (noise %: during the server run / the bound run)`
      : '') +
    (busy
      ? `\n^ wrk used ${WRK_BUSY_PCT}%+ of its core during the bound run: the bound may be the load generator's limit (wrk %: server run / bound run)`
      : '')
  )
}

export function mixRows(sizes: SizeResult[]): MixRow[] {
  return sizes.flatMap((s) =>
    s.endpoints.flatMap((e): MixRow[] =>
      e.mix
        ? [
            {
              ...(s.variant ? variantFields(s.variant) : {}),
              articles: s.articles,
              name: e.name as MixName,
              writePct: e.mix.writePct,
              rps: e.server.rps,
              boundRps: e.bound.rps,
              ratio: e.ratio,
              p50Ms: e.server.latencyMs.p50,
              p99Ms: e.server.latencyMs.p99,
              meanMs: e.server.latencyMs.mean,
              boundP99Ms: e.bound.latencyMs.p99,
              boundMeanMs: e.bound.latencyMs.mean,
              errors: e.errors,
              socketErrors: e.mix.socketErrors,
              statusErrors: e.mix.statusErrors,
              warmupStatuses: e.mix.warmupStatuses,
              peakRssBytes: e.peakRssBytes,
              noisePct: [noise(e.contention.server), noise(e.contention.bound)],
              wrkCpuPct: [e.server.wrkCpuPct, e.bound.wrkCpuPct],
              sent: e.mix.sent,
            },
          ]
        : [],
    ),
  )
}

/** Statuses other than 2xx seen in the warm-up, e.g. "404 x3, 500 x1". */
const badStatuses = (st: Record<string, number> | null) =>
  st === null
    ? 'not counted'
    : Object.entries(st)
        .filter(([k]) => !/^2/.test(k))
        .map(([k, v]) => `${k} x${v}`)
        .join(', ') || 'none'

/** How far the tail reaches beyond the mean: p99 ÷ mean latency. */
const tail = (p99: number, mean: number) => (mean > 0 ? (p99 / mean).toFixed(1) : '-')

export function mixTable(rows: MixRow[]): string {
  // a column naming the system variant when rows of several were measured
  const several = new Set(rows.map((r) => r.variant)).size > 1
  const body = rows.map((r) => {
    const mark = (Math.max(...r.noisePct) > NOISY_PCT ? '*' : '') + (r.wrkCpuPct[1] >= WRK_BUSY_PCT ? '^' : '')
    return [
      int(r.articles),
      ...(several ? [r.variant ?? ''] : []),
      r.name,
      `${r.writePct} %`,
      int(r.rps),
      int(r.boundRps),
      r.ratio.toFixed(3) + mark,
      ms(r.p50Ms),
      ms(r.p99Ms),
      `${ms(r.boundP99Ms)}`,
      `${tail(r.p99Ms, r.meanMs)}/${tail(r.boundP99Ms, r.boundMeanMs)}`,
      `${r.errors} (${r.statusErrors} status, ${r.socketErrors} socket)`,
      badStatuses(r.warmupStatuses),
      MB(r.peakRssBytes),
      `${r.noisePct[0]}/${r.noisePct[1]}`,
      `${Math.round(r.wrkCpuPct[0])}/${Math.round(r.wrkCpuPct[1])}`,
    ]
  })
  const head = [
    'articles',
    ...(several ? ['system'] : []),
    'variant',
    'writes',
    'req/s',
    'bound req/s',
    'ratio',
    'p50 ms',
    'p99 ms',
    'bound p99',
    'p99/mean',
    'errors',
    'non-2xx in warm-up',
    'peak RSS MiB',
    'noise %',
    'wrk %',
  ]
  const notes = [
    'Mixed traffic — one Lua script drawing every request at random (Zipf-skewed slugs, tags, users, pages); the bound is Bun.serve answering a 20-article list page to the same script.',
    'errors: non-2xx + socket errors, warm-up included; peak RSS: of the server during that variant.',
    "p99/mean: p99 over mean latency, the server / the bound. wrk keeps every connection busy, so the mean is connections ÷ req/s (Little's law) and p99 moves with throughput: a server with the bound's tail shape needs ≈ connections × p99/mean ÷ 10 ms req/s for p99 ≤ 10 ms.",
  ]
  if (rows.some((r) => Math.max(...r.noisePct) > NOISY_PCT))
    notes.push(`* other processes took more than ${NOISY_PCT}% of the server or the load core (server run / bound run)`)
  if (rows.some((r) => r.wrkCpuPct[1] >= WRK_BUSY_PCT))
    notes.push(`^ wrk used ${WRK_BUSY_PCT}%+ of its core during the bound run: the bound may be the load generator's limit`)
  return `${notes[0]}\n${table(head, body, several ? 4 : 3)}\n${notes.slice(1).join('\n')}`
}

/**
 * The system variants side by side: per size and endpoint one row, the bound
 * (measured once, on the first variant's response) and per variant its req/s,
 * ratio to the bound, p99, errors, peak RSS and CPU of the app / the database;
 * from the second variant on, its req/s relative to the first's.
 */
export function compareTable(sizes: SizeResult[]): string {
  const variants: Variant[] = []
  for (const s of sizes) if (s.variant && !variants.some((v) => v.label === s.variant!.label)) variants.push(s.variant)
  const articles = [...new Set(sizes.map((s) => s.articles))].sort((a, b) => a - b)
  const head = ['articles', 'endpoint', 'bound req/s']
  variants.forEach((v, i) => {
    head.push(`${v.label} req/s`, 'ratio', 'p99 ms', 'err', 'RSS MiB', 'CPU % app/db')
    if (i > 0) head.push(`vs ${variants[0]!.label}`)
  })
  const rows: string[][] = []
  let noisy = false
  for (const n of articles) {
    const at = sizes.filter((s) => s.articles === n)
    const names: EndpointName[] = []
    for (const s of at) for (const e of s.endpoints) if (!names.includes(e.name)) names.push(e.name)
    for (const name of names) {
      const cells = variants.map((v) => at.find((s) => s.variant?.label === v.label)?.endpoints.find((e) => e.name === name))
      const bound = cells.find((e) => e)?.bound.rps ?? 0
      const row = [int(n), name, int(bound)]
      const first = cells[0]?.server.rps
      cells.forEach((e, i) => {
        if (!e) row.push('-', '', '', '', '', '')
        else {
          const bad = Math.max(noise(e.contention.server), noise(e.contention.bound)) > NOISY_PCT
          noisy ||= bad
          const cpu = e.cpu ? `${Math.round(e.cpu.appPct)}/${e.backend === 'postgres' ? Math.round(e.cpu.dbPct) : '-'}` : ''
          row.push(
            int(e.server.rps),
            e.ratio.toFixed(3) + (bad ? '*' : ''),
            ms(e.server.latencyMs.p99),
            String(e.errors),
            MB(e.peakRssBytes),
            cpu,
          )
        }
        if (i > 0) row.push(e && first ? `${(e.server.rps / first).toFixed(2)}x` : '')
      })
      rows.push(row)
    }
  }
  const notes = [
    "Side by side — the same endpoints and mixed traffic on each system variant, one after the other on fresh copies of the same seed; the bound (Bun.serve answering the first variant's response) is measured once per endpoint and size.",
    'RSS: peak of the app (summed over its instances; the database server not included); CPU: % of one core during the measured run, the app (all instances) / the database server (all its processes).',
    ...variants.map((v) => `${v.label}: ${v.describe}`),
  ]
  if (noisy)
    notes.push(
      `* other processes took more than ${NOISY_PCT}% of a core (the server's or the load core; both cores for variants not confined to core 0)`,
    )
  return `${notes[0]}\n${table(head, rows, 2)}\n${notes.slice(1).join('\n')}`
}

function mixTargets(sizes: SizeResult[]): Target[] {
  const targets: Target[] = []
  const rows = mixRows(sizes)
  for (const r of rows) {
    const at = `${r.name} @ ${int(r.articles)}`
    const min = MIX_RATIO[r.name]
    targets.push({ name: `${at}: ratio to bound`, target: `≥ ${min}`, value: r.ratio.toFixed(3), pass: r.ratio >= min, mix: true })
    targets.push({
      name: `${at}: p99`,
      target: `≤ ${MIX_P99_MS} ms at ${MIX_CONNECTIONS} connections`,
      value: `${ms(r.p99Ms)} ms`,
      pass: r.p99Ms <= MIX_P99_MS,
      mix: true,
    })
    targets.push({ name: `${at}: errors`, target: '= 0', value: String(r.errors), pass: r.errors === 0, mix: true })
    targets.push({
      name: `${at}: peak RSS`,
      target: `≤ ${MB(RSS_BYTES)} MiB`,
      value: `${MB(r.peakRssBytes)} MiB`,
      pass: r.peakRssBytes <= RSS_BYTES,
      mix: true,
    })
  }
  return targets
}

function nearest(sizes: SizeResult[], n: number): SizeResult | undefined {
  return [...sizes].sort((a, b) => Math.abs(Math.log(a.articles / n)) - Math.abs(Math.log(b.articles / n)))[0]
}

export function evaluateTargets(sizes: SizeResult[], connections = MIX_CONNECTIONS): Target[] {
  const targets: Target[] = mixTargets(sizes)
  if (connections !== MIX_CONNECTIONS) {
    // the p99 goal is for 64 connections: measured at another count it is shown, not counted
    for (const t of targets) if (t.name.endsWith(': p99')) t.info = true
  }
  const at = nearest(sizes, TARGET_SIZE)
  const where = (s: SizeResult) => (s.articles === TARGET_SIZE ? '' : ` (measured at ${int(s.articles)}, not ${int(TARGET_SIZE)})`)
  if (at) {
    for (const e of at.endpoints) {
      const min = RATIO_TARGETS[e.name]
      if (min !== undefined) {
        targets.push({ name: `${e.name}: ratio to bound${where(at)}`, target: `≥ ${min}`, value: e.ratio.toFixed(3), pass: e.ratio >= min })
      }
    }
    for (const e of at.endpoints) {
      // the issue's p99 target is for its endpoint list; the uncached variants are shown for information
      if (e.kind !== 'read' || e.name.endsWith('-uncached')) continue
      const p99 = e.server.latencyMs.p99
      targets.push({ name: `${e.name}: p99${where(at)}`, target: `≤ ${P99_MS} ms`, value: `${ms(p99)} ms`, pass: p99 <= P99_MS })
    }
    const create = at.endpoints.find((e) => e.name === 'create')
    if (create) {
      targets.push({
        name: `create: req/s${where(at)}`,
        target: `≥ ${CREATE_RPS}`,
        value: int(create.server.rps),
        pass: create.server.rps >= CREATE_RPS,
      })
    }
  }
  // the mixed traffic has its own error targets
  const all = sizes.flatMap((s) => s.endpoints.filter((e) => !e.mix).map((e) => ({ s, e })))
  if (all.length) {
    const errors = all.reduce((n, { e }) => n + e.errors, 0)
    const which = all.filter(({ e }) => e.errors > 0).map(({ s, e }) => `${e.name}@${int(s.articles)}: ${e.errors}`)
    targets.push({
      name: 'errors (non-2xx + socket, warm-ups included, every size)',
      target: '= 0',
      value: which.length ? `${errors} (${which.join(', ')})` : '0',
      pass: errors === 0,
    })
  }
  const sorted = [...sizes].sort((a, b) => a.articles - b.articles)
  const small = sorted.find((s) => s.articles === 10_000) ?? sorted[0]
  const big = sorted.find((s) => s.articles === 1_000_000) ?? sorted.at(-1)
  if (small && big && small !== big) {
    const note = small.articles === 10_000 && big.articles === 1_000_000 ? '' : ` (${int(big.articles)} vs ${int(small.articles)})`
    for (const e of big.endpoints) {
      const base = small.endpoints.find((x) => x.name === e.name)
      if (e.kind !== 'read' || !base) continue
      const g = e.server.latencyMs.p50 / base.server.latencyMs.p50
      targets.push({
        name: `${e.name}: p50 at 1M / p50 at 10k${note}`,
        target: `≤ ${GROWTH}x`,
        value: `${g.toFixed(2)}x (${ms(e.server.latencyMs.p50)} / ${ms(base.server.latencyMs.p50)} ms)`,
        pass: g <= GROWTH,
        info: e.name.endsWith('-uncached'),
      })
    }
  }
  if (sizes.length) {
    const peak = Math.max(...sizes.map((s) => s.peakRssBytes))
    const worst = sizes.find((s) => s.peakRssBytes === peak)!
    targets.push({
      name: 'peak RSS under load (every size)',
      target: `≤ ${MB(RSS_BYTES)} MiB`,
      value: `${MB(peak)} MiB (at ${int(worst.articles)})`,
      pass: peak <= RSS_BYTES,
    })
    const largest = sorted.at(-1)!
    const m = median(largest.firstResponseMs)
    targets.push({
      name: `first response after start${largest.articles === 1_000_000 ? '' : ` (at ${int(largest.articles)}, not 1,000,000)`}, median of ${largest.firstResponseMs.length} starts`,
      target: `≤ ${FIRST_RESPONSE_MS} ms`,
      value: `${m.toFixed(0)} ms (${largest.firstResponseMs.map((x) => x.toFixed(0)).join(', ')})`,
      pass: m <= FIRST_RESPONSE_MS,
    })
  }
  return targets
}

export function targetsTable(targets: Target[], heading = 'Targets'): string {
  const mark = (t: Target) => (t.pass === null ? 'n/a' : t.info ? (t.pass ? 'info' : 'INFO') : t.pass ? 'PASS' : 'FAIL')
  const rows = targets.map((t) => [mark(t), t.name, t.target, t.value])
  const counted = targets.filter((t) => !t.info)
  const passed = counted.filter((t) => t.pass).length
  return `${heading} (issue 5; at ${int(TARGET_SIZE)} articles unless stated): ${passed} of ${counted.length} pass (info/INFO: extra rows, within/over the goal, not counted)\n${table(['', 'target', 'goal', 'measured'], rows, 3)}`
}
