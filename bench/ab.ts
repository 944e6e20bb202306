/**
 * bun bench/ab.ts --a BINARY --b BINARY [--size 20000] [--users 1000] [--variant mix-1]
 *                 [--rounds 3] [--duration 6] [--warmup 2] [--connections 64]
 *                 [--backend sqlite|postgres] [--pg-url URL]
 *                 [--a-env K=V]... [--b-env K=V]... [--together] [--help]
 *
 * Two builds compared under the same traffic, for a change whose effect is
 * smaller than the run-to-run noise of `bun run bench`. Rounds alternate the
 * order (A B, B A, ...); each measurement starts the build pinned to core 0
 * on a fresh copy of the same seed and drives it with wrk on core 1 (warm-up,
 * then the measured run; on PostgreSQL each gets its own database made from
 * the seeded one). Prints every measurement (req/s, p99, the server's CPU
 * time per request, which other processes disturb much less than
 * throughput, peak RSS, bytes per answer headers included), each side's
 * medians, and the ratios of throughput, CPU per request and p99 within each
 * round (A and B measured seconds apart, so drifts of the machine's speed
 * disturb them less) with a 90 % bootstrap interval of their median
 * (bench/stats.ts): how far it moves with the
 * rounds the machine happened to give. Throughput ratios above 1: B is
 * faster; CPU-per-request ratios above 1: B costs more.
 * `--a-env` / `--b-env` (repeatable) add to one side's environment: the same
 * binary twice, B with a setting on (`--b-env METRICS_TOKEN=x`).
 *
 * `--together`: in each round both builds serve AT ONCE, both pinned to core
 * 0 (the scheduler shares it), each driven by a wrk of its own with half the
 * connections on core 1: whatever the machine does during the round, it does
 * to both. Prints B/A of the CPU per request, of throughput (each build's
 * share of the core) and of p99, each a median over the rounds with its 90 %
 * interval.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { discover, endpoints, type EndpointName, type Fixture } from './endpoints.ts'
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
import { DEFAULT_PG_URL, databaseUrl, PgAdmin, pgWorkName, pgWorkingCopy, seededDatabase, seededPostgres, workingCopy } from './seed.ts'
import { median, withInterval } from './stats.ts'
import { ensureWrk, requireTaskset, runWrk } from './wrk.ts'

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    size: { type: 'string', default: '20000' },
    users: { type: 'string', default: '1000' },
    variant: { type: 'string', default: 'mix-1' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    backend: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string', default: DEFAULT_PG_URL },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    together: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
})
if (values.help) printUsage(import.meta.path)
/** `K=V` pairs as an environment. */
function envOf(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const p of pairs) {
    const eq = p.indexOf('=')
    if (eq <= 0) throw new Error(`--a-env / --b-env take K=V, got "${p}"`)
    out[p.slice(0, eq)] = p.slice(eq + 1)
  }
  return out
}
const extraEnv = { A: envOf(values['a-env']), B: envOf(values['b-env']) }
if (!values.a || !values.b) throw new Error('usage: bun bench/ab.ts --a BINARY --b BINARY [--variant mix-1] [--size N] [--rounds N]')
const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp')
const RUN_DIR = join(TMP, `ab-${process.pid}`)
const SIZE = Number(values.size)
const name = values.variant as EndpointName
if (values.backend !== 'sqlite' && values.backend !== 'postgres') throw new Error('--backend must be sqlite or postgres')

installCleanup()
requireTaskset()
await ensureWrk()
mkdirSync(RUN_DIR, { recursive: true })
onCleanup(async () => rmSync(RUN_DIR, { recursive: true, force: true }))
const builds = { A: join(RUN_DIR, 'a'), B: join(RUN_DIR, 'b') }
for (const [k, from] of [
  ['A', values.a],
  ['B', values.b],
] as const) {
  if (!existsSync(from)) throw new Error(`${from} does not exist`)
  copyFileSync(from, builds[k])
  chmodSync(builds[k], 0o755)
}
const spec = { articles: SIZE, users: Number(values.users), seed: 1 }
const admin = values.backend === 'postgres' ? new PgAdmin(values['pg-url']!) : undefined
if (admin) {
  onCleanup(async () => {
    await admin.drop(pgWorkName(), { force: true })
    await admin.close()
  })
}
// SQLite: a copy of the seeded file per measurement; PostgreSQL: a database made from the seeded one
const seeded = admin ? (await seededPostgres(admin, ROOT, builds.A, spec)).name : (await seededDatabase(ROOT, builds.A, TMP, spec)).file
async function freshDatabase(which = ''): Promise<string> {
  if (!admin) return workingCopy(seeded, join(RUN_DIR, `work${which}.db`))
  const name = which ? `${pgWorkName()}_${which.toLowerCase()}` : pgWorkName()
  if (which) onCleanup(async () => admin.drop(name, { force: true }))
  return databaseUrl(values['pg-url']!, await pgWorkingCopy(admin, seeded, name))
}

let fixture: Fixture | undefined
const AB_SECRET = 'bench-ab-signing-secret-of-at-least-32-characters'
/** The order of a round: A first in even rounds, B first in odd ones. */
const orderOf = (round: number) => (round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const))

/** Starts one build pinned to core 0 on `db`; resolves once it answers /ready (its database open). */
async function startBuild(which: 'A' | 'B', db: string) {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const t0 = performance.now()
  const server = spawn([builds[which]], {
    core: 0,
    env: { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db, LOG_LEVEL: 'warn', JWT_SECRET: AB_SECRET, ...extraEnv[which] },
  })
  return { which, server, base, ready: () => waitForAnswer(`${base}/ready`, t0, server) }
}

/** The measured endpoint; the first call discovers its fixture through `base`. */
async function endpointFor(base: string) {
  // the same seed and signing secret (AB_SECRET): the tokens of the first discovery work on every copy
  fixture ??= await discover(base, RUN_DIR, Number(values.users), { mix: name.startsWith('mix'), seed: 1 })
  const e = endpoints(fixture).find((x) => x.name === name)
  if (!e) throw new Error(`no endpoint ${name}`)
  return e
}

async function measure(which: 'A' | 'B') {
  const { server, base, ready } = await startBuild(which, await freshDatabase())
  const rss = rssSampler(server.pid, 100)
  try {
    await ready()
    const e = await endpointFor(base)
    const common = { base, script: e.script, connections: Number(values.connections), core: 1, tmpDir: RUN_DIR }
    // the peak under the traffic, warm-up included (not the logins of the first discovery)
    rss.resetWindow()
    await runWrk({ ...common, durationS: Number(values.warmup), phase: 'w' })
    const cpu0 = processCpuUs(server.pid)
    const r = await runWrk({ ...common, durationS: Number(values.duration), phase: 'm' })
    const cpuUs = processCpuUs(server.pid) - cpu0
    return {
      rps: r.rps,
      p99: r.latencyMs.p99,
      errors: r.errorCount,
      usPerRequest: cpuUs / Math.max(1, r.requests),
      bytesPerRequest: r.bytes / Math.max(1, r.requests),
      peakRssMb: rss.windowPeak() / 2 ** 20,
    }
  } finally {
    rss.stop()
    await stop(server)
  }
}

/** Both builds at once on core 0, each with its own wrk (half the connections): each one's CPU time per request. */
async function measureTogether(
  round: number,
): Promise<{ A: number; B: number; rps: { A: number; B: number }; p99: { A: number; B: number }; errors: number }> {
  const servers: Awaited<ReturnType<typeof startBuild>>[] = []
  try {
    // the one started first alternates, as in the rounds of the default mode
    for (const which of orderOf(round)) {
      const started = await startBuild(which, await freshDatabase(which))
      servers.push(started)
      await started.ready()
    }
    const e = await endpointFor(servers[0]!.base)
    const load = (base: string, durationS: number, phase: 'w' | 'm') =>
      runWrk({
        base,
        script: e.script,
        connections: Math.max(1, Number(values.connections) >> 1),
        core: 1,
        tmpDir: RUN_DIR,
        durationS,
        phase,
      })
    await Promise.all(servers.map((x) => load(x.base, Number(values.warmup), 'w')))
    const cpu0 = servers.map((x) => processCpuUs(x.server.pid))
    const runs = await Promise.all(servers.map((x) => load(x.base, Number(values.duration), 'm')))
    const us = servers.map((x, i) => (processCpuUs(x.server.pid) - cpu0[i]!) / Math.max(1, runs[i]!.requests))
    const a = servers.findIndex((x) => x.which === 'A')
    const b = 1 - a
    return {
      A: us[a]!,
      B: us[b]!,
      rps: { A: runs[a]!.rps, B: runs[b]!.rps },
      p99: { A: runs[a]!.latencyMs.p99, B: runs[b]!.latencyMs.p99 },
      errors: runs[0]!.errorCount + runs[1]!.errorCount,
    }
  } finally {
    for (const x of servers) await stop(x.server)
  }
}

if (values.together) {
  const ratios: number[] = []
  // B/A of throughput and of p99, per round: the two builds share the core, so each ratio is one round's comparison
  const rpsRatios: number[] = []
  const p99Ratios: number[] = []
  const us = { A: [] as number[], B: [] as number[] }
  for (let round = 0; round < Number(values.rounds); round++) {
    const m = await measureTogether(round)
    us.A.push(m.A)
    us.B.push(m.B)
    ratios.push(m.B / m.A)
    rpsRatios.push(m.rps.B / m.rps.A)
    p99Ratios.push(m.p99.B / m.p99.A)
    console.log(
      `round ${round + 1} together: A ${m.A.toFixed(1)} µs/request (${Math.round(m.rps.A).toLocaleString('en')} req/s, p99 ${m.p99.A.toFixed(1)} ms), ` +
        `B ${m.B.toFixed(1)} µs/request (${Math.round(m.rps.B).toLocaleString('en')} req/s, p99 ${m.p99.B.toFixed(1)} ms), B/A ${(m.B / m.A).toFixed(3)}, errors ${m.errors}`,
    )
  }
  console.log(`\n${name} at ${SIZE.toLocaleString('en')} articles on ${values.backend}, ${values.rounds} rounds, both builds at once`)
  console.log(`A ${values.a}: median ${median(us.A).toFixed(1)} µs of server CPU per request`)
  console.log(`B ${values.b}: median ${median(us.B).toFixed(1)} µs of server CPU per request`)
  console.log(
    `B/A CPU per request: median ${withInterval(ratios)} (range ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}, B cheaper in ${ratios.filter((r) => r <= 1).length} of ${ratios.length}); as throughput: ${(1 / median(ratios)).toFixed(3)}`,
  )
  console.log(`B/A throughput (each build's share of the core): median ${withInterval(rpsRatios)}`)
  console.log(`B/A p99 latency: median ${withInterval(p99Ratios)} (below 1: B's tail is shorter)`)
  await runCleanups()
  process.exit(0)
}

const results = { A: [] as Awaited<ReturnType<typeof measure>>[], B: [] as Awaited<ReturnType<typeof measure>>[] }
for (let round = 0; round < Number(values.rounds); round++) {
  for (const which of orderOf(round)) {
    const m = await measure(which)
    results[which].push(m)
    console.log(
      `round ${round + 1} ${which}: ${Math.round(m.rps).toLocaleString('en').padStart(7)} req/s  p99 ${m.p99.toFixed(1)} ms  ` +
        `server CPU ${m.usPerRequest.toFixed(1)} µs/request  peak RSS ${m.peakRssMb.toFixed(0)} MiB  errors ${m.errors}  bytes/request ${m.bytesPerRequest.toFixed(0)}`,
    )
  }
}
const med = (k: 'A' | 'B') => ({
  rps: median(results[k].map((m) => m.rps)),
  us: median(results[k].map((m) => m.usPerRequest)),
  p99: median(results[k].map((m) => m.p99)),
  rss: median(results[k].map((m) => m.peakRssMb)),
})
const A = med('A')
const B = med('B')
console.log(`\n${name} at ${SIZE.toLocaleString('en')} articles on ${values.backend}, ${values.rounds} rounds`)
const envNote = (k: 'A' | 'B') =>
  Object.entries(extraEnv[k])
    .map(([key, v]) => ` ${key}=${v}`)
    .join('')
const line = (k: 'A' | 'B', m: typeof A) =>
  `${k} ${values[k === 'A' ? 'a' : 'b']}${envNote(k)}: median ${Math.round(m.rps).toLocaleString('en')} req/s, ${m.us.toFixed(1)} µs of server CPU per request, p99 ${m.p99.toFixed(1)} ms, peak RSS ${m.rss.toFixed(0)} MiB`
console.log(line('A', A))
console.log(line('B', B))
console.log(
  `B/A: throughput ${(B.rps / A.rps).toFixed(3)}, CPU per request ${(B.us / A.us).toFixed(3)}, p99 ${(B.p99 / A.p99).toFixed(3)}, peak RSS ${(B.rss / A.rss).toFixed(3)}`,
)
// Each round measures A and B one after the other: on a machine whose speed drifts from minute
// to minute, the ratio within a round is steadier than the ratio of medians taken over all rounds.
const paired = (get: (m: (typeof results.A)[number]) => number) => results.B.map((b, i) => get(b) / get(results.A[i]!))
const rpsPairs = paired((m) => m.rps)
const usPairs = paired((m) => m.usPerRequest)
const p99Pairs = paired((m) => m.p99)
console.log(
  `B/A within each round: throughput median ${withInterval(rpsPairs)} (B ahead in ${rpsPairs.filter((r) => r >= 1).length} of ${rpsPairs.length}), ` +
    `CPU per request median ${withInterval(usPairs)}, p99 median ${withInterval(p99Pairs)} (below 1: B's tail is shorter)`,
)
await runCleanups()
process.exit(0)
