/**
 * bun run bench [--duration S] [--warmup S] [--sizes 10000,100000,1000000]
 *               [--endpoints list,tag,...] [--connections N] [--starts N] [--skip-build] [--check]
 *
 * Builds the binary, seeds (or reuses) a database per size, and for each size
 * starts the system under test (today: the binary, pinned to core 0) and
 * measures every endpoint with wrk pinned to core 1, then the same endpoint
 * against a minimal Bun.serve that answers the same bytes (the bound). The
 * mixed-traffic variants (mix-0, mix-1, mix-5) come first: one Lua script
 * drawing reads and writes at random, bounded by Bun.serve answering a
 * 20-article list page to the same script. Prints the mix and a table per
 * size, the issue's targets, writes bench/results/<date>.json, latest.json
 * and latest.svg.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { chart } from './chart.ts'
import { capture, discover, type EndpointName, ENDPOINT_NAMES, endpoints, isMix, MIX_BOUND_PATH, MIX_VARIANTS, setBound } from './endpoints.ts'
import { machineInfo } from './machine.ts'
import {
  coreShare,
  coreTimes,
  freePort,
  installCleanup,
  interrupted,
  processCpuUs,
  rssSampler,
  run,
  spawn,
  stop,
  waitForAnswer,
} from './proc.ts'
import {
  type Contention,
  evaluateTargets,
  MB,
  type EndpointResult,
  mixRows,
  mixTable,
  noise,
  type Results,
  NOISY_PCT,
  type SizeResult,
  sizeTable,
  targetsTable,
} from './report.ts'
import { removeDatabase, seededDatabase, workingCopy } from './seed.ts'
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

A full run (default sizes and endpoints) writes bench/results/<date>.json,
latest.json and latest.svg; a narrowed run writes under bench/results/partial/.
Where the server's time goes under a mix variant: bun bench/profile.ts --help`

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return Number(raw)
}

function options() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
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
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help) {
    console.log(HELP)
    process.exit(0)
  }
  const sizes = values.sizes
    ? values.sizes.split(',').map((s) => positiveInt('--sizes', s.trim().replace(/_/g, ''), 0))
    : DEFAULT_SIZES
  const names = values.endpoints ? values.endpoints.split(',').map((s) => s.trim()) : [...ENDPOINT_NAMES]
  for (const n of names) {
    if (!(ENDPOINT_NAMES as readonly string[]).includes(n)) {
      throw new Error(`unknown endpoint "${n}"; known: ${ENDPOINT_NAMES.join(', ')}`)
    }
  }
  const full =
    !values.sizes && !values.endpoints && sizes.length === DEFAULT_SIZES.length && names.length === ENDPOINT_NAMES.length
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
export interface ServerLog {
  lines: number
  first: string[]
}

/**
 * The system under test, started for one database size: where it answers,
 * which processes are it (their memory and CPU time count as the server's),
 * and how to stop it. A PostgreSQL backend or several instances behind a
 * balancer would be other implementations of SystemUnderTest; the rest of the
 * harness only sees this.
 */
export interface Running {
  /** http://127.0.0.1:port */
  base: string
  pids: number[]
  /** ms from spawning to the first answer, one per start */
  firstResponseMs: number[]
  log: ServerLog
  /** why it no longer runs (a process exited), or undefined while it runs */
  exited(): string | undefined
  /** stops it (SIGTERM, bounded) and removes its working data; an unclean exit is noted in the log */
  stop(): Promise<void>
}

export interface SystemUnderTest {
  /** one line for the report */
  describe: string
  /** seeds (or finds cached) data for every size, before any load */
  prepare(sizes: number[]): Promise<Map<number, { cached: boolean; seconds: number }>>
  /** starts it on fresh data of one size (the same data every run) */
  start(articles: number): Promise<Running>
}

/** The single binary on SQLite: one process pinned to the server core, a fresh copy of the seeded database per size. */
function sqliteBinary(o: { users: number; seed: number; starts: number }): SystemUnderTest {
  const seeds = new Map<number, { file: string; cached: boolean; seconds: number }>()

  const startOnce = async (db: string, log: ServerLog): Promise<{ child: Child; base: string; firstMs: number }> => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const t0 = performance.now()
    const child = spawn([BINARY, 'serve', '--port', String(port), '--host', '127.0.0.1', '--db', db], {
      core: SERVER_CORE,
      env: { LOG_LEVEL: 'warn' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    collect(child.stdout, log)
    collect(child.stderr, log)
    const firstMs = await waitForAnswer(`${base}/api/articles`, t0, child)
    return { child, base, firstMs }
  }

  return {
    describe: `dist/conduit on SQLite, one process pinned to core ${SERVER_CORE}`,
    async prepare(sizes) {
      for (const articles of sizes) {
        const s = await seededDatabase(ROOT, BINARY, TMP, { articles, users: o.users, seed: o.seed })
        console.log(`bench: ${articles.toLocaleString('en')} articles: ${s.cached ? 'cached' : `seeded in ${s.seconds.toFixed(1)} s`} ${s.file}`)
        seeds.set(articles, s)
      }
      return new Map([...seeds].map(([n, s]) => [n, { cached: s.cached, seconds: s.seconds }]))
    },
    async start(articles) {
      const seeded = seeds.get(articles)
      if (!seeded) throw new Error(`no seeded database for ${articles} articles`)
      console.log(`\nbench: ${articles.toLocaleString('en')} articles — copying the seeded database`)
      const workDb = workingCopy(seeded.file, join(RUN_DIR, `work-${articles}.db`))
      const log: ServerLog = { lines: 0, first: [] }
      const firstResponseMs: number[] = []
      let server: Awaited<ReturnType<typeof startOnce>> | undefined
      for (let i = 0; i < o.starts; i++) {
        if (server) await stop(server.child)
        server = await startOnce(workDb, log)
        firstResponseMs.push(server.firstMs)
      }
      const { child, base } = server!
      console.log(`bench: server pid ${child.pid} on ${base}; first response after start: ${firstResponseMs.map((x) => x.toFixed(0)).join(', ')} ms`)
      return {
        base,
        pids: [child.pid],
        firstResponseMs,
        log,
        exited: () => (child.exitCode !== null || child.signalCode !== null ? `pid ${child.pid} exited (${child.exitCode ?? child.signalCode})` : undefined),
        async stop() {
          await stop(child)
          if (child.exitCode !== 0) {
            log.lines++
            log.first.push(`bench: the server exited with ${child.exitCode ?? child.signalCode} on SIGTERM`)
          }
          removeDatabase(workDb)
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

  if (!o.skipBuild) {
    console.log('bench: building dist/conduit (bun run build)')
    const b = await run(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit', timeoutMs: 300_000 })
    if (b.code !== 0) throw new Error(`the build failed (exit ${b.code})`)
  }

  if (!existsSync(BUILT)) throw new Error(`${BUILT} does not exist; run without --skip-build`)
  copyFileSync(BUILT, BINARY)
  chmodSync(BINARY, 0o755)
  const system = sqliteBinary(o)
  const seeds = await system.prepare(o.sizes)

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

  /** warm-up, then the measured run, noting how much of both cores other processes took meanwhile */
  const measure = async (base: string, script: WrkScript, pids: number[]) => {
    const common = { base, script, connections: o.connections, core: LOAD_CORE, tmpDir: RUN_DIR }
    const warm = o.warmupS > 0 ? await runWrk({ ...common, durationS: o.warmupS, phase: 'w' }) : EMPTY
    const before = { s: coreTimes(SERVER_CORE), l: coreTimes(LOAD_CORE), pid: processCpuUs(pids), self: process.cpuUsage() }
    const main = await runWrk({ ...common, durationS: o.durationS, phase: 'm' })
    const self = process.cpuUsage(before.self)
    const wrkUs = (main.wrkCpuPct / 100) * main.durationS * 1e6
    const contention: Contention = {
      serverCore: coreShare(before.s, coreTimes(SERVER_CORE), processCpuUs(pids) - before.pid),
      loadCore: coreShare(before.l, coreTimes(LOAD_CORE), wrkUs + self.user + self.system),
    }
    return { warm, main, contention }
  }

  const sizes: SizeResult[] = []
  const wantMix = [...o.names].some(isMix)
  for (const articles of o.sizes) {
    const seeded = seeds.get(articles)!
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
      const real = await measure(base, e.script, pids).catch(async (err: Error) => {
        await Bun.sleep(100)
        throw server.exited() ? died() : err
      })
      const peakRssBytes = rss.windowPeak()
      await setBound(boundBase, c)
      const b = await measure(boundBase, e.script, [bound.pid])
      const r: EndpointResult = {
        name: e.name,
        title: e.title,
        kind: e.kind,
        status: c.status,
        responseBytes: c.body.length,
        server: real.main,
        serverWarmup: real.warm,
        bound: b.main,
        boundWarmup: b.warm,
        ratio: b.main.rps > 0 ? real.main.rps / b.main.rps : 0,
        contention: { server: real.contention, bound: b.contention },
        errors: real.main.errorCount + real.warm.errorCount,
        peakRssBytes,
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
      console.log(
        `  ${e.name.padEnd(10)} ${Math.round(r.server.rps).toLocaleString('en').padStart(7)} req/s  p50 ${r.server.latencyMs.p50.toFixed(2)} ms  p99 ${r.server.latencyMs.p99.toFixed(2)} ms  errors ${r.errors}` +
          `  | bound ${Math.round(r.bound.rps).toLocaleString('en').padStart(7)} req/s  ratio ${r.ratio.toFixed(3)}  RSS ${MB(peakRssBytes)} MB` +
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
    if (size.endpoints.some((e) => e.mix)) console.log(`\n${mixTable(mixRows([size]))}`)
    console.log(`\n${sizeTable(size)}`)
    for (const l of log.first) console.log(`  server: ${l}`)
  }
  await stop(bound)

  const targets = evaluateTargets(sizes, o.connections)
  const finished = new Date()
  const mix = mixRows(sizes)
  const results: Results = {
    version: 1,
    date: started.toISOString().slice(0, 10),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    totalSeconds: Math.round((performance.now() - t0) / 100) / 10,
    // the mixed traffic first: the figures closest to real use
    ...(mix.length ? { mix } : {}),
    system: system.describe,
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
    },
    settledSeconds: Math.round(settledS * 10) / 10,
    machine,
    sizes,
    targets,
  }

  const dir = o.full ? RESULTS : join(RESULTS, 'partial')
  mkdirSync(dir, { recursive: true })
  const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')
  const json = JSON.stringify(results, null, 2) + '\n'
  writeFileSync(join(dir, `${stamp}.json`), json)
  writeFileSync(join(dir, 'latest.json'), json)
  writeFileSync(join(dir, 'latest.svg'), chart(results))

  console.log(`\n${'='.repeat(100)}`)
  console.log(
    `Conduit benchmark ${results.startedAt} — commit ${machine.commit.slice(0, 10)}${machine.dirty ? ' (+ uncommitted changes)' : ''}, Bun ${machine.bun}, ${machine.cpu}`,
  )
  console.log(
    `server on core ${SERVER_CORE}, wrk ${machine.wrk} on core ${LOAD_CORE}: ${o.connections} connections, 1 thread, ${o.warmupS} s warm-up + ${o.durationS} s per endpoint.` +
      ' errors = non-2xx (status > 399) + socket errors, warm-up included; ratio = server req/s / bound req/s',
  )
  console.log(`system under test: ${system.describe}`)
  if (mix.length) {
    console.log(`\n${mixTable(mix)}`)
    console.log(`\n${targetsTable(targets.filter((t) => t.mix), 'Mixed-traffic targets')}`)
  }
  for (const s of sizes) console.log(`\n${sizeTable(s)}`)
  const rest = targets.filter((t) => !t.mix)
  if (rest.length) console.log(`\n${targetsTable(rest)}`)
  console.log(`\nwrote ${join(dir, `${stamp}.json`)}, ${join(dir, 'latest.json')}, ${join(dir, 'latest.svg')}`)
  console.log(`total ${results.totalSeconds.toFixed(0)} s (of which ${settledS.toFixed(0)} s waiting for a quiet machine)`)
  return o.check && targets.some((t) => t.pass === false && !t.info) ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (e) => {
    if (interrupted()) return // the signal handler stops the children and exits
    console.error(`bench: ${(e as Error).message}`)
    process.exit(1)
  },
)
