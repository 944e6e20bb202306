/**
 * bun run bench [--duration S] [--warmup S] [--sizes 10000,100000,1000000]
 *               [--endpoints list,tag,...] [--connections N] [--starts N] [--skip-build] [--check]
 *               [--backends sqlite,postgres] [--instances 1,2] [--single-instance off,on] [--pg-url URL]
 *
 * Builds the binary, seeds (or reuses) a database per size and backend, and
 * for each size starts each system variant in turn (the binary on SQLite or
 * PostgreSQL, one process pinned to core 0 or `serve --workers N` on both
 * cores, with or without SINGLE_INSTANCE) on a fresh copy of the seed and
 * measures every endpoint with wrk pinned to core 1, then — once per endpoint
 * and size, for all variants — the same endpoint against a minimal Bun.serve
 * that answers the same bytes (the bound). The mixed-traffic variants (mix-0,
 * mix-1, mix-5) come first: one Lua script drawing reads and writes at
 * random, bounded by Bun.serve answering a 20-article list page to the same
 * script. Prints the mix and a table per size (and, with several system
 * variants, a table of them side by side), the issue's targets, writes
 * bench/results/latest.json (a narrowed run: bench/results/partial/, which git
 * ignores; bench/results/README.md says which runs are kept and how).
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  capture,
  discover,
  type EndpointName,
  ENDPOINT_NAMES,
  endpoints,
  isMix,
  MIX_BOUND_PATH,
  MIX_VARIANTS,
  setBound,
} from './endpoints.ts'
import { machineInfo } from './machine.ts'
import {
  childPids,
  coreShare,
  coreTimes,
  cpuSince,
  cpuSnapshot,
  freePort,
  installCleanup,
  interrupted,
  listeningPids,
  onCleanup,
  rssSampler,
  run,
  runCleanups,
  spawn,
  stop,
  waitForAnswer,
} from './proc.ts'
import {
  compareTable,
  type Contention,
  evaluateTargets,
  MB,
  type EndpointResult,
  mixRows,
  mixTable,
  noise,
  type Results,
  NOISY_PCT,
  resultsJson,
  type SizeResult,
  sizeTable,
  type Target,
  targetsTable,
  type Variant,
  variantFields,
} from './report.ts'
import {
  type Backend,
  DEFAULT_PG_URL,
  databaseUrl,
  dropStaleWorkingCopies,
  PgAdmin,
  pgWorkingCopy,
  pgWorkName,
  redact,
  removeDatabase,
  seededDatabase,
  seededPostgres,
  workingCopy,
} from './seed.ts'
import { ensureWrk, MIX, requireTaskset, runWrk, type WrkResult, type WrkScript } from './wrk.ts'

const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp')
const RESULTS = join(ROOT, 'bench/results')
const BUILT = join(ROOT, 'dist/conduit')
/** this run's scratch files (binary copy, working database, wrk scripts), removed at exit */
const RUN_DIR = join(TMP, `run-${process.pid}`)
/** a private copy: another build replacing dist/conduit mid-run cannot touch the running server */
const BINARY = join(RUN_DIR, 'conduit')
const SERVER_CORE = 0
const LOAD_CORE = 1
const DEFAULT_SIZES = [10_000, 100_000, 1_000_000]

const HELP = `bun run bench [options]

  --duration S        measured seconds per endpoint (default 5)
  --warmup S          warm-up seconds before each measurement (default 2)
  --sizes A,B         article counts to measure (default ${DEFAULT_SIZES.join(',')})
  --endpoints X,Y     endpoints to measure (default all: ${ENDPOINT_NAMES.join(',')});
                      mix-0, mix-1, mix-5: mixed traffic with 0, 1, 5 % writes
  --connections N     wrk connections (default 64)
  --users N           seeded users (default 1000)
  --seed N            seed value (default 1)
  --starts N          server starts per size for the first-response time (default 3)
  --settle S          before each endpoint, wait up to S seconds for other processes
                      to leave both cores (default 15; 0 to not wait)
  --skip-build        use dist/conduit as it is
  --check             exit 1 when a target fails

The system under test (each combination is measured in turn at every size,
on a fresh copy of the same seed, against one bound per endpoint and size;
several print a table of them side by side):
  --backends A,B      sqlite, postgres or both (default sqlite; --backend is the same)
  --instances N,M     processes serving the port: 1 runs the binary pinned to core
                      ${SERVER_CORE}; N > 1 runs conduit serve --workers N pinned to cores
                      ${SERVER_CORE},${LOAD_CORE} (2 cores shared by the instances, the database
                      and wrk) (default 1; --workers is the same)
  --single-instance [on|off|off,on]
                      PostgreSQL, one instance: SINGLE_INSTANCE=true in the server's
                      environment (no per-request change-log read); off,on measures
                      both (default off; the bare flag means on)
  --pg-url URL        the PostgreSQL server's maintenance database (default
                      $BENCH_PG_URL or ${DEFAULT_PG_URL}); seeds are cached
                      there as conduit_bench_seed_a<articles>_u<users>_s<seed>_<key>
                      databases, each run works on conduit_bench_work_<pid>
                      (CREATE DATABASE … TEMPLATE), dropped at the end and on Ctrl-C.
                      PostgreSQL's processes are not pinned.

Examples:
  bun run bench --backends sqlite,postgres --sizes 20000,100000 --endpoints mix-0,mix-1,mix-5
  bun run bench --backends postgres --instances 1,2 --endpoints mix-1,list
  bun run bench --backends postgres --single-instance off,on --endpoints mix-0,mix-1,list,article

A full run (default sizes, endpoints and system) replaces bench/results/latest.json (git
keeps the earlier ones); a narrowed run writes <date>.json and latest.json under
bench/results/partial/ (ignored by git; bench/results/README.md says how to keep one).`

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return Number(raw)
}

const BACKENDS: readonly Backend[] = ['sqlite', 'postgres']

/** A bare --single-instance (last, or followed by another option) means --single-instance on. */
function bareFlags(argv: string[]): string[] {
  return argv.map((a, i) =>
    a === '--single-instance' && (i === argv.length - 1 || argv[i + 1]!.startsWith('-')) ? '--single-instance=on' : a,
  )
}

const list = (raw: string) =>
  raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)

/** Every combination of backend, instances and single-instance mode that makes sense, in run order. */
function variantsOf(backends: Backend[], instances: number[], single: boolean[]): { variants: Variant[]; skipped: string[] } {
  const variants: Variant[] = []
  const skipped: string[] = []
  for (const backend of backends) {
    for (const n of instances) {
      for (const si of single) {
        if (si && backend !== 'postgres') {
          skipped.push(`${backend} with SINGLE_INSTANCE (PostgreSQL only)`)
          continue
        }
        if (si && n > 1) {
          skipped.push(`${backend} ${n} instances with SINGLE_INSTANCE (true only when one process uses the database)`)
          continue
        }
        const label = `${backend}${n > 1 ? ` w${n}` : ''}${si ? ' SI' : ''}`
        const where =
          n > 1
            ? `conduit serve --workers ${n}: ${n} processes on one port pinned to cores ${SERVER_CORE},${LOAD_CORE} (2 cores shared by the instances, ${backend === 'postgres' ? 'the database' : 'their SQLite'} and wrk)`
            : `one process pinned to core ${SERVER_CORE}`
        const db =
          backend === 'postgres'
            ? `; PostgreSQL's processes are not pinned: the database server shares the machine's two cores with the app and wrk${si ? '; SINGLE_INSTANCE=true (no per-request change-log read)' : ''}`
            : ''
        variants.push({
          backend,
          instances: n,
          singleInstance: si,
          label,
          describe: `dist/conduit on ${backend === 'postgres' ? 'PostgreSQL' : 'SQLite'}, ${where}${db}`,
        })
      }
    }
  }
  return { variants, skipped }
}

function options() {
  const { values } = parseArgs({
    args: bareFlags(process.argv.slice(2)),
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      sizes: { type: 'string' },
      endpoints: { type: 'string' },
      connections: { type: 'string' },
      users: { type: 'string' },
      seed: { type: 'string' },
      starts: { type: 'string' },
      settle: { type: 'string' },
      'skip-build': { type: 'boolean' },
      check: { type: 'boolean' },
      backends: { type: 'string' },
      backend: { type: 'string' },
      instances: { type: 'string' },
      workers: { type: 'string' },
      'single-instance': { type: 'string' },
      'pg-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help) {
    console.log(HELP)
    process.exit(0)
  }
  const sizes = values.sizes ? values.sizes.split(',').map((s) => positiveInt('--sizes', s.trim().replace(/_/g, ''), 0)) : DEFAULT_SIZES
  const names = values.endpoints ? values.endpoints.split(',').map((s) => s.trim()) : [...ENDPOINT_NAMES]
  for (const n of names) {
    if (!(ENDPOINT_NAMES as readonly string[]).includes(n)) {
      throw new Error(`unknown endpoint "${n}"; known: ${ENDPOINT_NAMES.join(', ')}`)
    }
  }
  if (values.backends !== undefined && values.backend !== undefined) throw new Error('give --backends or --backend, not both')
  const backends = [...new Set(list(values.backends ?? values.backend ?? 'sqlite'))]
  for (const b of backends)
    if (!(BACKENDS as string[]).includes(b)) throw new Error(`unknown backend "${b}"; known: ${BACKENDS.join(', ')}`)
  if (values.instances !== undefined && values.workers !== undefined) throw new Error('give --instances or --workers, not both')
  const instances = [...new Set(list(values.instances ?? values.workers ?? '1').map((n) => positiveInt('--instances', n, 1)))]
  const singleRaw = values['single-instance'] ?? 'off'
  const single = [
    ...new Set(
      list(singleRaw === 'both' ? 'off,on' : singleRaw).map((x) => {
        if (['on', 'true', 'yes'].includes(x)) return true
        if (['off', 'false', 'no'].includes(x)) return false
        throw new Error(`--single-instance takes on, off or off,on, got "${x}"`)
      }),
    ),
  ]
  const { variants, skipped } = variantsOf(backends as Backend[], instances, single)
  for (const s of skipped) console.warn(`bench: not measured: ${s}`)
  if (!variants.length) throw new Error('no system variant left to measure (see the lines above)')
  const pgUrl = values['pg-url'] ?? process.env.BENCH_PG_URL ?? DEFAULT_PG_URL
  if (!/^postgres(ql)?:\/\//.test(pgUrl)) throw new Error(`--pg-url must be a postgres:// URL, got "${pgUrl}"`)
  const defaultSystem = variants.length === 1 && variants[0]!.label === 'sqlite'
  const full =
    !values.sizes && !values.endpoints && sizes.length === DEFAULT_SIZES.length && names.length === ENDPOINT_NAMES.length && defaultSystem
  return {
    durationS: positiveInt('--duration', values.duration, 5),
    warmupS: positiveInt('--warmup', values.warmup, 2, 0),
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    names: new Set(names as EndpointName[]),
    connections: positiveInt('--connections', values.connections, 64),
    users: positiveInt('--users', values.users, 1000),
    seed: positiveInt('--seed', values.seed, 1, 0),
    starts: positiveInt('--starts', values.starts, 3),
    settleS: positiveInt('--settle', values.settle, 15, 0),
    skipBuild: values['skip-build'] ?? false,
    check: values.check ?? false,
    variants,
    backends: backends as Backend[],
    instances,
    single,
    pgUrl,
    full,
  }
}

const EMPTY: WrkResult = {
  requests: 0,
  durationS: 0,
  rps: 0,
  bytes: 0,
  latencyMs: { p50: 0, p90: 0, p99: 0, max: 0, mean: 0 },
  errors: { connect: 0, read: 0, write: 0, timeout: 0, status: 0 },
  errorCount: 0,
  wrkCpuPct: 0,
}

type Child = ReturnType<typeof spawn>

const errorsOf = (w: WrkResult) => w.errors.connect + w.errors.read + w.errors.write + w.errors.timeout

/** Collects a child's output lines (the server logs at warn and above only). */
function collect(stream: unknown, log: ServerLog): void {
  if (!(stream instanceof ReadableStream)) return
  void (async () => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of stream as ReadableStream<Uint8Array>) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n')
      rest = lines.pop() ?? ''
      for (const l of lines) {
        if (!l.trim()) continue
        log.lines++
        if (log.first.length < 20) log.first.push(l.slice(0, 500))
      }
    }
  })()
}

/** Output lines of the system under test (it logs at warn and above only). */
interface ServerLog {
  lines: number
  first: string[]
}

/**
 * The system under test, started for one database size: where it answers,
 * which processes are it (their memory counts as the server's; their CPU time
 * and the database server's count as the system's), and how to stop it. The
 * rest of the harness only sees this.
 */
interface Running {
  /** http://127.0.0.1:port */
  base: string
  /** the processes serving requests (one, or the workers of `serve --workers N`): RSS is summed over them */
  pids: number[]
  /** the app's processes and the database server's (PostgreSQL: the postmaster and its children), now */
  cpuPids(): Promise<{ app: number[]; db: number[] }>
  /** the app and its database run on the server core only (else: on both cores, with wrk) */
  pinned: boolean
  /** ms from spawning to the first answer, one per start */
  firstResponseMs: number[]
  log: ServerLog
  /** why it no longer runs (a process exited), or undefined while it runs */
  exited(): string | undefined
  /** stops it (SIGTERM, bounded) and removes its working data; an unclean exit is noted in the log */
  stop(): Promise<void>
}

interface SystemUnderTest {
  variant: Variant
  /** seeds (or finds cached) data for every size, before any load */
  prepare(sizes: number[]): Promise<Map<number, { cached: boolean; seconds: number; from: string }>>
  /** starts it on fresh data of one size (the same data every run) */
  start(articles: number): Promise<Running>
}

type Seeded = { cached: boolean; seconds: number; from: string }

/**
 * Seeds per backend and size, shared by the variants of one backend: a SQLite
 * file under bench/tmp, or a PostgreSQL database on the benchmark's server.
 */
function seedStore(o: { users: number; seed: number }, admin: () => PgAdmin) {
  const seeds = new Map<string, Seeded>()
  return {
    async get(backend: Backend, articles: number): Promise<Seeded> {
      const key = `${backend}/${articles}`
      const known = seeds.get(key)
      if (known) return known
      const spec = { articles, users: o.users, seed: o.seed }
      let s: Seeded
      if (backend === 'sqlite') {
        const r = await seededDatabase(ROOT, BINARY, TMP, spec)
        s = { cached: r.cached, seconds: r.seconds, from: r.file }
      } else {
        const r = await seededPostgres(admin(), ROOT, BINARY, spec)
        s = { cached: r.cached, seconds: r.seconds, from: r.name }
      }
      console.log(
        `bench: ${articles.toLocaleString('en')} articles on ${backend}: ${s.cached ? 'cached' : `seeded in ${s.seconds.toFixed(1)} s`} ${s.from}`,
      )
      seeds.set(key, s)
      return s
    },
  }
}

/** Waits (bounded) until `n` children of `supervisor` listen on `port`; returns their pids. */
async function waitForInstances(supervisor: Child, port: number, n: number, timeoutMs = 30_000): Promise<number[]> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if (supervisor.exitCode !== null || supervisor.signalCode !== null)
      throw new Error(`the supervisor exited (${supervisor.exitCode ?? supervisor.signalCode})`)
    const listening = listeningPids(port, await childPids(supervisor.pid))
    if (listening.length >= n) return listening
    if (performance.now() > deadline)
      throw new Error(`only ${listening.length} of ${n} instances listen on port ${port} after ${timeoutMs} ms`)
    await Bun.sleep(20)
  }
}

/**
 * The single binary on one backend: one process pinned to the server core, or
 * `serve --workers N` pinned to both cores; a fresh copy of the seeded
 * database per size (a file, or CREATE DATABASE … TEMPLATE).
 */
function binarySystem(v: Variant, seeds: ReturnType<typeof seedStore>, admin: () => PgAdmin, starts: number): SystemUnderTest {
  const core = v.instances > 1 ? `${SERVER_CORE},${LOAD_CORE}` : SERVER_CORE

  const startOnce = async (db: string, log: ServerLog): Promise<{ child: Child; base: string; firstMs: number; pids: number[] }> => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const t0 = performance.now()
    const args = ['serve', '--port', String(port), '--host', '127.0.0.1', '--db', db, '--workers', String(v.instances)]
    const child = spawn([BINARY, ...args], {
      core,
      // nothing of the caller's shell decides what is measured
      env: {
        LOG_LEVEL: 'warn',
        SINGLE_INSTANCE: String(v.singleInstance),
        DATABASE_URL: undefined,
        DATABASE_PATH: undefined,
        WORKERS: undefined,
        PORT: undefined,
        HOST: undefined,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    collect(child.stdout, log)
    collect(child.stderr, log)
    const firstMs = await waitForAnswer(`${base}/api/articles`, t0, child)
    const pids = v.instances > 1 ? await waitForInstances(child, port, v.instances) : [child.pid]
    return { child, base, firstMs, pids }
  }

  /** stops the server; with several instances, also any worker that outlived its supervisor */
  const stopServer = async (s: { child: Child; pids: number[] }) => {
    await stop(s.child, 10_000)
    for (const pid of s.pids) {
      if (pid === s.child.pid) continue
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
  }

  return {
    variant: v,
    async prepare(sizes) {
      const out = new Map<number, Seeded>()
      for (const articles of sizes) out.set(articles, await seeds.get(v.backend, articles))
      return out
    },
    async start(articles) {
      const seeded = await seeds.get(v.backend, articles)
      let server: Awaited<ReturnType<typeof startOnce>> | undefined
      let removeWork: () => Promise<void>
      if (v.backend === 'sqlite') {
        const file = join(RUN_DIR, `work-${articles}.db`)
        removeWork = async () => removeDatabase(file)
      } else {
        const name = pgWorkName()
        removeWork = () => admin().drop(name, { force: true })
      }
      // on Ctrl-C or a failure: workers that outlive their supervisor, the working database (even half made)
      const unregister = onCleanup(async () => {
        if (server) await stopServer(server)
        await removeWork()
      })
      let db: string
      if (v.backend === 'sqlite') {
        console.log(`\nbench: ${articles.toLocaleString('en')} articles on ${v.label} — copying the seeded database`)
        db = workingCopy(seeded.from, join(RUN_DIR, `work-${articles}.db`))
      } else {
        console.log(
          `\nbench: ${articles.toLocaleString('en')} articles on ${v.label} — CREATE DATABASE ${pgWorkName()} TEMPLATE ${seeded.from}`,
        )
        db = databaseUrl(admin().url, await pgWorkingCopy(admin(), seeded.from, pgWorkName()))
      }
      const log: ServerLog = { lines: 0, first: [] }
      const firstResponseMs: number[] = []
      for (let i = 0; i < starts; i++) {
        if (server) await stopServer(server)
        server = await startOnce(db, log)
        firstResponseMs.push(server.firstMs)
      }
      const { child, base, pids } = server!
      const what = v.instances > 1 ? `supervisor pid ${child.pid}, instances ${pids.join(', ')}` : `server pid ${child.pid}`
      console.log(`bench: ${what} on ${base}; first response after start: ${firstResponseMs.map((x) => x.toFixed(0)).join(', ')} ms`)
      return {
        base,
        pids,
        pinned: v.backend === 'sqlite' && v.instances === 1,
        async cpuPids() {
          return { app: [...new Set([child.pid, ...pids])], db: v.backend === 'postgres' ? await admin().processes() : [] }
        },
        firstResponseMs,
        log,
        exited: () => {
          if (child.exitCode !== null || child.signalCode !== null) return `pid ${child.pid} exited (${child.exitCode ?? child.signalCode})`
          const gone = pids.filter((pid) => !existsSync(`/proc/${pid}`))
          return gone.length ? `instance pid ${gone.join(', ')} exited` : undefined
        },
        async stop() {
          await stopServer(server!)
          if (child.exitCode !== 0) {
            log.lines++
            log.first.push(`bench: the server exited with ${child.exitCode ?? child.signalCode} on SIGTERM`)
          }
          await removeWork()
          unregister()
        },
      }
    },
  }
}

/** scratch directories of earlier runs that were killed outright */
function removeStaleRuns(): void {
  if (!existsSync(TMP)) return
  for (const d of readdirSync(TMP)) {
    const pid = /^run-(\d+)$/.exec(d)?.[1]
    if (pid && !existsSync(`/proc/${pid}`)) rmSync(join(TMP, d), { recursive: true, force: true })
  }
}

async function main(): Promise<number> {
  const started = new Date()
  const t0 = performance.now()
  const o = options()
  const removeTemporary = () => {
    rmSync(RUN_DIR, { recursive: true, force: true })
  }
  installCleanup(removeTemporary)
  process.on('exit', removeTemporary)
  if ((navigator.hardwareConcurrency ?? 1) < 2) throw new Error('the benchmark needs 2 cores (server on core 0, wrk on core 1)')
  requireTaskset()
  await ensureWrk()
  removeStaleRuns()
  mkdirSync(RUN_DIR, { recursive: true })

  // PostgreSQL: one maintenance connection for the whole run, opened only when measured
  let pg: PgAdmin | undefined
  let pgVersion: string | undefined
  const admin = () => {
    if (!pg) throw new Error('no PostgreSQL connection')
    return pg
  }
  if (o.variants.some((v) => v.backend === 'postgres')) {
    pg = new PgAdmin(o.pgUrl)
    onCleanup(async () => {
      await pg?.close()
    })
    try {
      pgVersion = await pg.check()
    } catch (e) {
      throw new Error(`cannot reach PostgreSQL at ${redact(o.pgUrl)}: ${(e as Error).message}`)
    }
    console.log(`bench: ${pgVersion} at ${redact(o.pgUrl)}`)
    await dropStaleWorkingCopies(pg)
  }

  if (!o.skipBuild) {
    console.log('bench: building dist/conduit (bun run build)')
    const b = await run(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit', timeoutMs: 300_000 })
    if (b.code !== 0) throw new Error(`the build failed (exit ${b.code})`)
  }

  if (!existsSync(BUILT)) throw new Error(`${BUILT} does not exist; run without --skip-build`)
  copyFileSync(BUILT, BINARY)
  chmodSync(BINARY, 0o755)
  const seedCache = seedStore(o, admin)
  const systems = o.variants.map((v) => binarySystem(v, seedCache, admin, o.starts))
  const seeds = new Map<string, Map<number, Seeded>>()
  for (const system of systems) seeds.set(system.variant.label, await system.prepare(o.sizes))
  const several = systems.length > 1
  for (const v of o.variants) console.log(`bench: system under test${several ? ` [${v.label}]` : ''}: ${v.describe}`)

  // from here on this process (polling, RSS sampling) stays on the load core
  await run(['taskset', '-a', '-p', '-c', String(LOAD_CORE), String(process.pid)], { timeoutMs: 5000 })
  const machine = await machineInfo(ROOT)

  const boundPort = await freePort()
  const boundBase = `http://127.0.0.1:${boundPort}`
  const bound = spawn([process.execPath, join(ROOT, 'bench/bound.ts'), String(boundPort)], { core: SERVER_CORE, stdout: 'ignore' })
  await waitForAnswer(`${boundBase}/`, performance.now(), bound, 15_000)

  /**
   * On a shared machine other processes come and go: before an endpoint, wait
   * (bounded) until they leave both cores, measured over half a second.
   */
  let settledS = 0
  const settle = async () => {
    const t = performance.now()
    for (let announced = false; ; ) {
      const before = { s: coreTimes(SERVER_CORE), l: coreTimes(LOAD_CORE), self: process.cpuUsage() }
      await Bun.sleep(500)
      const self = process.cpuUsage(before.self)
      const c: Contention = {
        serverCore: coreShare(before.s, coreTimes(SERVER_CORE), 0),
        loadCore: coreShare(before.l, coreTimes(LOAD_CORE), self.user + self.system),
      }
      const busy = noise(c)
      const waited = (performance.now() - t) / 1000
      if (busy <= NOISY_PCT || waited >= o.settleS) {
        if (announced) console.log(`  (waited ${waited.toFixed(1)} s for a quiet machine; others now take ${busy}%)`)
        settledS += waited
        return
      }
      if (!announced) console.log(`  (other processes take ${busy}% of a core; waiting up to ${o.settleS} s)`)
      announced = true
    }
  }

  type Measured = { app: number[]; db: number[] }
  /**
   * Warm-up, then the measured run, noting how much of the cores other
   * processes took meanwhile and the CPU of the system's processes. Pinned
   * (the app alone on the server core): per core, as the server core and the
   * load core. Else (PostgreSQL's processes float; instances on both cores):
   * over both cores, less the app, the database server, wrk and this process.
   */
  const measure = async (base: string, script: WrkScript, system: { pinned: boolean; cpuPids(): Promise<Measured> }) => {
    const common = { base, script, connections: o.connections, core: LOAD_CORE, tmpDir: RUN_DIR }
    const warm = o.warmupS > 0 ? await runWrk({ ...common, durationS: o.warmupS, phase: 'w' }) : EMPTY
    const pids = await system.cpuPids()
    const app = cpuSnapshot(pids.app)
    const db = cpuSnapshot(pids.db)
    const before = {
      s: coreTimes(SERVER_CORE),
      l: coreTimes(LOAD_CORE),
      both: coreTimes([SERVER_CORE, LOAD_CORE]),
      self: process.cpuUsage(),
    }
    const main = await runWrk({ ...common, durationS: o.durationS, phase: 'm' })
    const after = await system.cpuPids()
    const self = process.cpuUsage(before.self)
    const appUs = cpuSince(app, after.app)
    const dbUs = cpuSince(db, after.db)
    const wrkUs = (main.wrkCpuPct / 100) * main.durationS * 1e6
    let contention: Contention
    if (system.pinned && !pids.db.length) {
      contention = {
        serverCore: coreShare(before.s, coreTimes(SERVER_CORE), appUs),
        loadCore: coreShare(before.l, coreTimes(LOAD_CORE), wrkUs + self.user + self.system),
      }
    } else {
      const both = coreShare(before.both, coreTimes([SERVER_CORE, LOAD_CORE]), appUs + dbUs + wrkUs + self.user + self.system, 2)
      contention = { serverCore: both, loadCore: both, shared: true }
    }
    const pct = (us: number) => (main.durationS > 0 ? Math.round((us / (main.durationS * 1e6)) * 1000) / 10 : 0)
    return { warm, main, contention, cpu: { appPct: pct(appUs), dbPct: pct(dbUs) } }
  }
  const boundSystem = { pinned: true, cpuPids: async () => ({ app: [bound.pid], db: [] }) }

  const sizes: SizeResult[] = []
  const wantMix = [...o.names].some(isMix)
  for (const articles of o.sizes) {
    // the bound, per endpoint: measured on the first variant's captured response, shared by all variants
    const bounds = new Map<
      EndpointName,
      { captured: Awaited<ReturnType<typeof capture>>; from: string; result: Awaited<ReturnType<typeof measure>> }
    >()
    const atSize: SizeResult[] = []
    for (const system of systems) {
      const v = system.variant
      const seeded = seeds.get(v.label)!.get(articles)!
      // a failed or interrupted run stops it and drops its working database (see start)
      const server = await system.start(articles)
      const { base, pids, log } = server
      const rss = rssSampler(pids, 200)

      const fixture = await discover(base, RUN_DIR, o.users, { mix: wantMix, seed: o.seed })
      if (fixture.mix) {
        const m = fixture.mix
        console.log(
          `bench: mixed traffic draws from ${m.slugs.toLocaleString('en')} slugs, ${m.tags} tags, ${m.users} users, ${m.pages.toLocaleString('en')} list pages;` +
            ` ${m.tokens} users logged in (${m.loginSeconds.toFixed(1)} s)`,
        )
      }
      const eps = endpoints(fixture, { seed: o.seed }).filter((e) => o.names.has(e.name))
      // one real response per endpoint, before any load changes the data
      const captured = new Map<EndpointName, Awaited<ReturnType<typeof capture>>>()
      for (const e of eps) captured.set(e.name, await capture(base, e.capture))

      const results: EndpointResult[] = []
      const died = () =>
        new Error(`the server stopped during the run (${server.exited()}); its output:\n${log.first.join('\n') || '(none)'}`)
      for (const e of eps) {
        if (server.exited()) throw died()
        const c = captured.get(e.name)!
        if (c.status < 200 || c.status > 299) {
          console.warn(`bench: ${e.name}: the captured response is a ${c.status}: ${new TextDecoder().decode(c.body).slice(0, 200)}`)
        }
        if (o.settleS > 0) await settle()
        rss.resetWindow()
        const real = await measure(base, e.script, server).catch(async (err: Error) => {
          await Bun.sleep(100)
          throw server.exited() ? died() : err
        })
        const peakRssBytes = rss.windowPeak()
        let b = bounds.get(e.name)
        if (!b) {
          // the database may still be busy with what the load left (checkpoints, autovacuum)
          if (!server.pinned && o.settleS > 0) await settle()
          await setBound(boundBase, c)
          b = { captured: c, from: v.label, result: await measure(boundBase, e.script, boundSystem) }
          bounds.set(e.name, b)
        } else if (b.captured.status !== c.status || Math.abs(b.captured.body.length - c.body.length) > 0.05 * b.captured.body.length) {
          console.warn(
            `bench: ${e.name}: ${v.label} answered ${c.status} with ${c.body.length} bytes, the bound answers ${b.from}'s ${b.captured.status} with ${b.captured.body.length} bytes`,
          )
        }
        const r: EndpointResult = {
          ...variantFields(v),
          name: e.name,
          title: e.title,
          kind: e.kind,
          status: c.status,
          responseBytes: c.body.length,
          server: real.main,
          bound: b.result.main,
          ratio: b.result.main.rps > 0 ? real.main.rps / b.result.main.rps : 0,
          contention: { server: real.contention, bound: b.result.contention },
          errors: real.main.errorCount + real.warm.errorCount,
          peakRssBytes,
          cpu: real.cpu,
          ...(several ? { boundFrom: b.from } : {}),
        }
        if (e.kind === 'mix' && isMix(e.name)) {
          r.mix = {
            writePct: MIX_VARIANTS[e.name],
            boundPath: MIX_BOUND_PATH,
            sent: real.main.mix?.kinds ?? {},
            warmupStatuses: real.warm.mix?.statuses ?? null,
            socketErrors: errorsOf(real.main) + errorsOf(real.warm),
            statusErrors: real.main.errors.status + real.warm.errors.status,
          }
        }
        results.push(r)
        const cpu = `CPU app ${Math.round(real.cpu.appPct)}%${v.backend === 'postgres' ? ` db ${Math.round(real.cpu.dbPct)}%` : ''}`
        console.log(
          `  ${several ? `${v.label.padEnd(12)} ` : ''}${e.name.padEnd(10)} ${Math.round(r.server.rps).toLocaleString('en').padStart(7)} req/s  p50 ${r.server.latencyMs.p50.toFixed(2)} ms  p99 ${r.server.latencyMs.p99.toFixed(2)} ms  errors ${r.errors}` +
            `  | bound ${Math.round(r.bound.rps).toLocaleString('en').padStart(7)} req/s  ratio ${r.ratio.toFixed(3)}  RSS ${MB(peakRssBytes)} MiB  ${cpu}` +
            `  | noise ${noise(r.contention.server)}% / ${noise(r.contention.bound)}%, wrk CPU ${r.server.wrkCpuPct}% / ${r.bound.wrkCpuPct}%`,
        )
      }
      const highWaterMarkBytes = rss.highWaterMark() ?? null
      rss.stop()
      await server.stop()
      rmSync(fixture.slugsFile, { force: true })
      if (fixture.mix) rmSync(fixture.mix.dataFile, { force: true })

      const size: SizeResult = {
        articles,
        ...(several || v.label !== 'sqlite' ? { variant: v } : {}),
        seededFrom: seeded.from,
        seed: { cached: seeded.cached, seconds: seeded.seconds },
        firstResponseMs: server.firstResponseMs,
        peakRssBytes: rss.peak(),
        highWaterMarkBytes,
        serverLog: log,
        fixture: {
          user: fixture.user,
          tag: fixture.tag,
          author: fixture.author,
          favoritedBy: fixture.favoritedBy,
          slug: fixture.slug,
          favoriteSlugs: fixture.slugCount,
        },
        endpoints: results,
      }
      sizes.push(size)
      atSize.push(size)
      if (size.endpoints.some((e) => e.mix)) console.log(`\n${mixTable(mixRows([size]))}`)
      console.log(`\n${sizeTable(size)}`)
      for (const l of log.first) console.log(`  server: ${l}`)
    }
    if (several) console.log(`\n${compareTable(atSize)}`)
  }
  await stop(bound)

  // the targets per system variant (named after it when there are several)
  const targets: Target[] = o.variants.flatMap((v) => {
    const own = sizes.filter((s) => (s.variant?.label ?? 'sqlite') === v.label)
    return evaluateTargets(own, o.connections).map((t) => (several ? { ...t, name: `[${v.label}] ${t.name}` } : t))
  })
  const finished = new Date()
  const mix = mixRows(sizes)
  const results: Results = {
    version: 2,
    date: started.toISOString().slice(0, 10),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    totalSeconds: Math.round((performance.now() - t0) / 100) / 10,
    // the mixed traffic first: the figures closest to real use
    ...(mix.length ? { mix } : {}),
    system: o.variants.map((v) => (several ? `[${v.label}] ${v.describe}` : v.describe)).join('\n'),
    variants: o.variants,
    options: {
      durationS: o.durationS,
      warmupS: o.warmupS,
      connections: o.connections,
      threads: 1,
      users: o.users,
      seed: o.seed,
      serverCore: SERVER_CORE,
      loadCore: LOAD_CORE,
      settleS: o.settleS,
      mix: MIX,
      backends: o.backends,
      instances: o.instances,
      singleInstance: o.single,
      ...(pg ? { postgres: `${pgVersion} at ${redact(o.pgUrl)}` } : {}),
    },
    settledSeconds: Math.round(settledS * 10) / 10,
    machine,
    sizes,
    targets,
  }

  const dir = o.full ? RESULTS : join(RESULTS, 'partial')
  mkdirSync(dir, { recursive: true })
  const stamp = started
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z')
  const json = resultsJson(results)
  // a full run's history is git's: bench/results keeps the latest of each kind of run only
  const written = o.full ? [] : [join(dir, `${stamp}.json`)]
  for (const file of written) writeFileSync(file, json)
  writeFileSync(join(dir, 'latest.json'), json)

  console.log(`\n${'='.repeat(100)}`)
  console.log(
    `Conduit benchmark ${results.startedAt} — commit ${machine.commit.slice(0, 10)}${machine.dirty ? ' (+ uncommitted changes)' : ''}, Bun ${machine.bun}, ${machine.cpu}`,
  )
  const pinnedOnly = o.variants.every((v) => v.backend === 'sqlite' && v.instances === 1)
  console.log(
    `server on core ${SERVER_CORE}${pinnedOnly ? '' : ' unless stated below'}, wrk ${machine.wrk} on core ${LOAD_CORE}: ${o.connections} connections, 1 thread, ${o.warmupS} s warm-up + ${o.durationS} s per endpoint.` +
      ' errors = non-2xx (status > 399) + socket errors, warm-up included; ratio = server req/s / bound req/s',
  )
  if (o.variants.some((v) => v.backend === 'postgres')) {
    console.log(`${pgVersion} at ${redact(o.pgUrl)}, not pinned: the database server shares the machine's two cores with the app and wrk.`)
  }
  if (o.variants.some((v) => v.instances > 1)) {
    console.log(
      `with several instances the server is pinned to cores ${SERVER_CORE},${LOAD_CORE}: 2 cores shared by the instances, ${o.variants.some((v) => v.backend === 'postgres') ? 'the database' : 'their SQLite'} and wrk (timings of several instances and of one pinned process are not like for like).`,
    )
  }
  for (const v of o.variants) console.log(`system under test${several ? ` [${v.label}]` : ''}: ${v.describe}`)
  if (mix.length) {
    console.log(`\n${mixTable(mix)}`)
    console.log(
      `\n${targetsTable(
        targets.filter((t) => t.mix),
        'Mixed-traffic targets',
      )}`,
    )
  }
  for (const s of sizes) console.log(`\n${sizeTable(s)}`)
  if (several) console.log(`\n${compareTable(sizes)}`)
  const rest = targets.filter((t) => !t.mix)
  if (rest.length) console.log(`\n${targetsTable(rest)}`)
  console.log(`\nwrote ${[...written, join(dir, 'latest.json')].join(', ')}`)
  console.log(`total ${results.totalSeconds.toFixed(0)} s (of which ${settledS.toFixed(0)} s waiting for a quiet machine)`)
  await runCleanups()
  return o.check && targets.some((t) => t.pass === false && !t.info) ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  async (e) => {
    if (interrupted()) return // the signal handler stops the children and exits
    console.error(`bench: ${(e as Error).message}`)
    // the server first (its instances, its working database), then the rest
    await runCleanups()
    process.exit(1)
  },
)
