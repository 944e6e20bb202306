/**
 * bun bench/profile.ts [--size N] [--variant mix-1] [--warmup S] [--duration S]
 *                      [--connections N] [--interval US] [--no-perf] [--no-js] [--gc-log]
 *                      [--backend sqlite|postgres] [--pg-url URL]
 *
 * Where the server's time goes under the mixed traffic. Builds a profiling
 * binary (the same `bun build --compile --bytecode` as `bun run build`, but
 * without --minify, so functions keep their names and the bundle keeps the
 * `// src/...` comments that name each module), starts it on a fresh copy of
 * the seeded database pinned to core 0 with BUN_OPTIONS=--cpu-prof, runs the
 * mix variant with wrk on core 1 (warm-up, then the measured run), stops the
 * server and summarises the samples taken during the measured run only:
 * self and inclusive time per function, per module and per group.
 *
 * JavaScriptCore samples only while JavaScript (or a native function it
 * called: SQLite statements, Response, JSON) is on the stack; the rest of the
 * server's CPU time (the event loop, uWebSockets, the kernel's TCP work,
 * garbage collection outside allocation) is not in those samples. When
 * `perf` works here, the same window is also sampled with perf (cpu-clock),
 * which splits all of the process's CPU time by thread, by kernel / user
 * space and, for the kernel, by the system call it serves. --no-js leaves
 * the JS sampler out (a perf-only run, undisturbed by it). --gc-log starts
 * the server with BUN_JSC_logGC=true and sums the collections JavaScriptCore
 * logs during the measured run (their pauses, and their cycles).
 *
 * Writes the summary (markdown) and the raw profiles under bench/results/partial/.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { discover, isMix, MIX_VARIANTS, type MixName } from './endpoints.ts'
import { coreShare, coreTimes, freePort, installCleanup, processCpuUs, run, spawn, stop, waitForAnswer } from './proc.ts'
import { DEFAULT_PG_URL, databaseUrl, PgAdmin, pgWorkingCopy, removeDatabase, seededDatabase, seededPostgres, workingCopy } from './seed.ts'
import { ensureWrk, requireTaskset, runWrk } from './wrk.ts'

const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp')
const OUT = join(ROOT, 'bench/results/partial')
const RUN_DIR = join(TMP, `profile-${process.pid}`)
const BINARY = join(RUN_DIR, 'conduit-prof')
const SERVER_CORE = 0
const LOAD_CORE = 1

function options() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      size: { type: 'string' },
      variant: { type: 'string' },
      warmup: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      users: { type: 'string' },
      seed: { type: 'string' },
      interval: { type: 'string' },
      top: { type: 'string' },
      'no-perf': { type: 'boolean' },
      'no-js': { type: 'boolean' },
      'gc-log': { type: 'boolean' },
      backend: { type: 'string' },
      'pg-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help) {
    console.log(readFileSync(import.meta.path, 'utf8').split('*/')[0])
    process.exit(0)
  }
  const int = (name: string, raw: string | undefined, fallback: number, min = 1) => {
    if (raw === undefined) return fallback
    if (!/^\d+$/.test(raw.replace(/_/g, '')) || Number(raw.replace(/_/g, '')) < min)
      throw new Error(`--${name} must be an integer >= ${min}`)
    return Number(raw.replace(/_/g, ''))
  }
  const backend = values.backend ?? 'sqlite'
  if (backend !== 'sqlite' && backend !== 'postgres') throw new Error('--backend must be sqlite or postgres')
  const variant = values.variant ?? 'mix-1'
  if (!isMix(variant)) throw new Error(`--variant must be one of ${Object.keys(MIX_VARIANTS).join(', ')}`)
  return {
    size: int('size', values.size, 100_000),
    variant: variant as MixName,
    warmupS: int('warmup', values.warmup, 3, 0),
    durationS: int('duration', values.duration, 20),
    connections: int('connections', values.connections, 64),
    users: int('users', values.users, 1000),
    seed: int('seed', values.seed, 1, 0),
    intervalUs: int('interval', values.interval, 500, 50),
    top: int('top', values.top, 30),
    perf: !values['no-perf'],
    js: !values['no-js'],
    gcLog: values['gc-log'] ?? false,
    backend: backend as 'sqlite' | 'postgres',
    pgUrl: values['pg-url'] ?? DEFAULT_PG_URL,
  }
}

// ---------------------------------------------------------------- the JS profile

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

/**
 * The bundle the binary runs, as embedded in it: the profile's line numbers
 * point into it, and its `// src/x.ts` / `// node_modules/...` comments say
 * which module each line came from.
 */
function bundleOf(binary: string): { moduleOf: (line: number) => string; source: (line: number) => string } {
  const bytes = readFileSync(binary)
  // line 0 is the shebang of src/main.ts, line 1 Bun's pragma, line 2 the CommonJS wrapper
  const marker = Buffer.from('#!/usr/bin/env bun\n// @bun @bytecode @bun-cjs\n(function(exports, require, module, __filename, __dirname) {')
  let best: { text: string } | undefined
  for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1)) {
    const end = bytes.indexOf(0, at)
    const text = bytes.subarray(at, end < 0 ? undefined : end).toString('utf8')
    if (text.includes('\n// src/app.ts\n') && (!best || text.length > best.text.length)) best = { text }
  }
  if (!best) return { moduleOf: () => '?', source: () => '' }
  const lines = best.text.split('\n')
  const headers: { line: number; module: string }[] = []
  lines.forEach((l, i) => {
    const m = /^\/\/ ((?:src|node_modules)\/\S+)$/.exec(l)
    if (m) headers.push({ line: i, module: m[1]! })
  })
  const moduleOf = (line: number) => {
    let lo = 0
    let hi = headers.length - 1
    let found = '(bundle prelude)'
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (headers[mid]!.line <= line) {
        found = headers[mid]!.module
        lo = mid + 1
      } else hi = mid - 1
    }
    return found
  }
  const source = (line: number) => (lines[line] ?? '').trim().replace(/\s+/g, ' ').slice(0, 90)
  return { moduleOf, source }
}

interface Frame {
  name: string
  module: string
  /** function name @ module:line; a native's name with its JS caller */
  key: string
  native: boolean
  /** the bundle's source line of a JS frame (what the function is) */
  source: string
}

/**
 * Groups, decided by the innermost frame that says something: a native
 * called from JavaScript is grouped by what it is (a SQLite statement step,
 * a Response) or, failing that, by its caller's module.
 */
const SQLITE_NATIVES = new Set(['get', 'all', 'run', 'values', 'iterate', 'finalize', 'prepare', 'query', 'exec', 'transaction'])
function groupOf(stack: Frame[]): string {
  const leaf = stack[stack.length - 1]!
  const caller = [...stack].reverse().find((f) => !f.native)
  const mod = leaf.native ? (caller?.module ?? '') : leaf.module
  const callerName = caller?.name ?? ''
  if (leaf.native) {
    const n = leaf.name
    if (n === 'get' && /src\/db\/sqlite\/changes\.ts$/.test(caller?.module ?? ''))
      return 'cache versioning: PRAGMA data_version and the change log (src/db/sqlite/changes.ts)'
    if (
      SQLITE_NATIVES.has(n) &&
      (caller?.module === 'bun:sqlite' || /src\/.*(queries|list|changes|secret|database|checkpointer)\.ts$/.test(caller?.module ?? ''))
    ) {
      return 'SQLite statements (native step, incl. JSON built by SQL)'
    }
    if (n === 'Response' || n === 'Headers' || n === 'arrayBuffer' || n === 'text' || n === 'json')
      return 'Response / Headers / body objects (Bun native)'
    if (n === 'stringify' || n === 'parse') return 'JSON.stringify / JSON.parse'
    if (/^(encode|decode|encodeInto)$/.test(n)) return 'text encoding (TextEncoder/Decoder)'
    if (/hmac|digest|update|createHmac|timingSafeEqual|verify|sign/i.test(n) || /auth\/jwt\.ts$/.test(caller?.module ?? ''))
      return 'JWT / crypto'
    if (n === '(garbage collector)' || n === '(gc)') return 'GC'
  }
  if (mod === 'bun:sqlite') return 'SQLite statements (native step, incl. JSON built by SQL)'
  if (
    /node_modules\/elysia\//.test(mod) ||
    (/^(anonymous|handle|map|mapResponse|mapEarlyResponse|mapCompactResponse)$/.test(leaf.name) && mod === '?')
  )
    return 'Elysia (routing, hooks, handler composition)'
  if (/node_modules\/@sinclair\/typebox\//.test(mod)) return 'TypeBox validation'
  if (/node_modules\//.test(mod)) return `other dependencies (${mod.split('/').slice(1, 3).join('/')})`
  if (/src\/(http\/responses|cache\/[a-z]+)\.ts$/.test(mod))
    return 'caches: response cache and versioning (src/http/responses.ts, src/cache)'
  if (/src\/auth\//.test(mod)) return 'auth: token checks (src/auth)'
  if (/src\/(app|http\/entry|http\/dispatch|http\/query)\.ts$/.test(mod))
    return 'request entry and dispatch: cache lookup, route match, query, headers (src/http/entry.ts, dispatch.ts, query.ts)'
  if (/src\/http\//.test(mod)) return 'http helpers (src/http)'
  if (/src\/(articles|comments|profiles|tags|users)\//.test(mod))
    return 'handlers and JSON assembly in JS (src/articles, comments, profiles, tags, users)'
  if (/src\/db\//.test(mod)) return 'db helpers (src/db)'
  if (/^(node:|internal:|bun:)/.test(mod) || (leaf.native && callerName === '')) return 'Bun internals / natives without a JS caller'
  if (mod === '(bundle prelude)') return 'bundle prelude (module wrappers)'
  return `other (${mod || leaf.name})`
}

interface JsSummary {
  samples: number
  /** samples in the window with no frame at all */
  empty: number
  /** the bundle's source line per function key */
  sources: Map<string, string>
  groups: [string, number][]
  selfTop: { key: string; self: number; total: number }[]
  totalTop: { key: string; self: number; total: number }[]
  modules: [string, number][]
}

function summariseJs(p: CpuProfile, fromUs: number, toUs: number, binary: string, top: number): JsSummary {
  const { moduleOf, source } = bundleOf(binary)
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const sources = new Map<string, string>()
  const frameOf = (n: ProfileNode, caller: Frame | undefined): Frame => {
    const cf = n.callFrame
    const native = cf.lineNumber < 0 || (cf.url === '' && cf.functionName !== '')
    const module = cf.url.startsWith('file:///$bunfs/') ? moduleOf(cf.lineNumber) : cf.url || '(native)'
    const name = cf.functionName || '(anonymous)'
    const key = native ? `${name} [native] ← ${caller ? caller.key : '(no JS caller)'}` : `${name} @ ${module}:${cf.lineNumber + 1}`
    const src = native || !cf.url.startsWith('file:///$bunfs/') ? '' : source(cf.lineNumber)
    if (src) sources.set(key, src)
    return { name, module, key, native, source: src }
  }
  const frames = new Map<number, Frame>()
  const stackOf = (id: number): Frame[] => {
    const chain: ProfileNode[] = []
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!
      if (n.callFrame.functionName === '(root)') break
      chain.push(n)
    }
    const out: Frame[] = []
    let caller: Frame | undefined
    for (const n of chain.reverse()) {
      let f = frames.get(n.id)
      if (!f) frames.set(n.id, (f = frameOf(n, caller)))
      out.push(f)
      if (!f.native) caller = f
    }
    return out
  }
  const self = new Map<string, number>()
  const total = new Map<string, number>()
  const groups = new Map<string, number>()
  const modules = new Map<string, number>()
  let t = p.startTime
  let samples = 0
  let empty = 0
  const stacks = new Map<number, Frame[]>()
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0
    if (t < fromUs || t > toUs) continue
    const id = p.samples[i]!
    let stack = stacks.get(id)
    if (!stack) stacks.set(id, (stack = stackOf(id)))
    if (stack.length === 0) {
      empty++
      continue
    }
    samples++
    const leaf = stack[stack.length - 1]!
    self.set(leaf.key, (self.get(leaf.key) ?? 0) + 1)
    for (const k of new Set(stack.map((f) => f.key))) total.set(k, (total.get(k) ?? 0) + 1)
    const g = groupOf(stack)
    groups.set(g, (groups.get(g) ?? 0) + 1)
    const mod = leaf.native
      ? `${leaf.name} [native] ← ${[...stack].reverse().find((f) => !f.native)?.module ?? '(no JS caller)'}`
      : leaf.module
    modules.set(mod, (modules.get(mod) ?? 0) + 1)
  }
  const rows = [...total.keys()].map((key) => ({ key, self: self.get(key) ?? 0, total: total.get(key)! }))
  const sorted = <T>(m: Map<string, T>, by: (v: T) => number) => [...m].sort((a, b) => by(b[1]) - by(a[1]))
  return {
    samples,
    empty,
    sources,
    groups: sorted(groups, (v) => v),
    selfTop: [...rows]
      .sort((a, b) => b.self - a.self)
      .filter((r) => r.self > 0)
      .slice(0, top),
    totalTop: [...rows].sort((a, b) => b.total - a.total).slice(0, top),
    modules: sorted(modules, (v) => v).slice(0, top),
  }
}

// ---------------------------------------------------------------- perf

/** Kernel time by the system call (or interrupt work) it serves; user time by thread and library. */
const SYSCALL_GROUPS: [RegExp, string][] = [
  [/__x64_sys_(sendto|sendmsg|send|writev|write)\b/, 'send/write (network out)'],
  [/__x64_sys_(recvfrom|recvmsg|recv|readv|read)\b/, 'recv/read (network in)'],
  [/__x64_sys_(epoll_wait|epoll_pwait|epoll_pwait2|epoll_ctl)\b/, 'epoll'],
  [/__x64_sys_fcntl\b/, 'fcntl (SQLite file locks)'],
  [/__x64_sys_pread64\b/, 'pread (SQLite page reads through the OS cache)'],
  [/__x64_sys_(pwrite64|fsync|fdatasync|ftruncate)\b/, 'pwrite / fsync (SQLite WAL writes, checkpoints)'],
  [/__x64_sys_(lseek|newfstat|fstat|openat|close|unlink|access|newstat|statx)\b/, 'other file calls (SQLite)'],
  [/__x64_sys_(mmap|munmap|madvise|mprotect|brk|mremap)\b/, 'memory mapping (allocator, GC)'],
  [/__x64_sys_(futex|sched_yield|nanosleep|clock_nanosleep)\b/, 'futex / thread wake-ups'],
  [/(asm_exc_page_fault|exc_page_fault|do_user_addr_fault)/, 'page faults'],
  [/(net_rx_action|do_softirq|__do_softirq|handle_softirqs|irq_exit)/, 'softirq (loopback TCP receive)'],
]

interface PerfSummary {
  samples: number
  byThread: [string, number][]
  kernelShare: number
  kernel: [string, number][]
  user: [string, number][]
}

async function summarisePerf(data: string): Promise<PerfSummary | undefined> {
  const r = await run(['perf', 'script', '-i', data, '-F', 'comm,ip,sym,dso'], { timeoutMs: 300_000 })
  if (r.code !== 0) return undefined
  const byThread = new Map<string, number>()
  const kernel = new Map<string, number>()
  const user = new Map<string, number>()
  let samples = 0
  let kernelSamples = 0
  for (const block of r.stdout.split('\n\n')) {
    const lines = block.split('\n').filter((l) => l.trim())
    if (!lines.length) continue
    // first line: comm (maybe followed by the first frame); frames follow, innermost first
    const head = lines[0]!
    const comm = head.trim().split(/\s+/)[0] ?? '?'
    const frames = lines.slice(1).map((l) => l.trim())
    if (!frames.length) continue
    samples++
    byThread.set(comm, (byThread.get(comm) ?? 0) + 1)
    const leaf = frames[0]!
    if (/\(\[kernel\.kallsyms\]\)$/.test(leaf)) {
      kernelSamples++
      let group: string | undefined
      for (const f of frames) {
        const hit = SYSCALL_GROUPS.find(([re]) => re.test(f))
        if (hit) {
          group = hit[1]
          break
        }
        const sys = /__x64_sys_(\w+)/.exec(f)
        if (sys) {
          group = `other system call: ${sys[1]}`
          break
        }
      }
      if (!group) {
        const sym = leaf.split(/\s+/)[1] ?? '?'
        group = `no system call: ${sym}`
      }
      kernel.set(group, (kernel.get(group) ?? 0) + 1)
    } else {
      const dso = /\(([^()]*)\)$/.exec(leaf)?.[1] ?? '?'
      const sym = leaf
        .split(/\s+/)
        .slice(1)
        .join(' ')
        .replace(/\s*\([^()]*\)$/, '')
      const what = /libc/.test(dso)
        ? /mem(cpy|move|set|cmp)/.test(sym)
          ? 'libc memcpy/memmove/memset'
          : 'libc other'
        : /^\[JIT\]|perf-\d+\.map/.test(dso)
          ? 'JIT-compiled JavaScript'
          : /vdso/.test(dso)
            ? 'vdso (clock reads)'
            : `${dso.split('/').pop()} (Bun runtime: JSC, SQLite, uWS; no symbols)`
      user.set(`${comm}: ${what}`, (user.get(`${comm}: ${what}`) ?? 0) + 1)
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
  // the long tail of kernel symbols outside system calls goes into one line
  const kernelRows = sorted(kernel)
  const tail = kernelRows.filter(([k, n]) => k.startsWith('no system call: ') && n / Math.max(1, samples) < 0.005)
  const kept = kernelRows.filter((r) => !tail.includes(r))
  if (tail.length) kept.push([`no system call: ${tail.length} other kernel functions`, tail.reduce((a, [, n]) => a + n, 0)])
  return { samples, byThread: sorted(byThread), kernelShare: samples ? kernelSamples / samples : 0, kernel: kept, user: sorted(user) }
}

// ---------------------------------------------------------------- GC log

interface GcLine {
  atUs: number
  text: string
}

/** Reads the server's stderr, stamping each line with its arrival time (µs since the epoch). */
function stampLines(stream: unknown, into: GcLine[]): void {
  if (!(stream instanceof ReadableStream)) return
  void (async () => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of stream as ReadableStream<Uint8Array>) {
      const atUs = Date.now() * 1000
      const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n')
      rest = lines.pop() ?? ''
      for (const text of lines) into.push({ atUs, text })
    }
  })()
}

interface GcSummary {
  eden: number
  full: number
  /** sum of the pauses JSC logs (p=…ms, one per stop of the program) */
  pauseMs: number
  /** sum of whole collection cycles (cycle …ms END), concurrent parts included */
  cycleMs: number
  /** the largest heap size a collection started at (START M …kb) */
  maxHeapKb: number
}

function summariseGc(lines: GcLine[], fromUs: number, toUs: number): GcSummary {
  const s: GcSummary = { eden: 0, full: 0, pauseMs: 0, cycleMs: 0, maxHeapKb: 0 }
  for (const { atUs, text } of lines) {
    if (atUs < fromUs || atUs > toUs || !text.startsWith('[GC<')) continue
    if (/START .*=> EdenCollection/.test(text)) s.eden++
    if (/START .*=> FullCollection/.test(text)) s.full++
    for (const m of text.matchAll(/ p=([\d.]+)ms/g)) s.pauseMs += Number(m[1])
    for (const m of text.matchAll(/cycle ([\d.]+)ms END/g)) s.cycleMs += Number(m[1])
    const heap = /START M (\d+)kb/.exec(text)
    if (heap) s.maxHeapKb = Math.max(s.maxHeapKb, Number(heap[1]))
  }
  return s
}

// ---------------------------------------------------------------- the run

const pct = (n: number, of: number) => (of > 0 ? `${((100 * n) / of).toFixed(1)} %` : '-')

function mdTable(head: string[], rows: (string | number)[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

function jsCoverage(js: JsSummary, intervalUs: number, windowMs: number): string {
  const jsMs = (js.samples * intervalUs) / 1000
  return (
    `JS samples in the window: ${js.samples.toLocaleString('en')} (one every ${intervalUs} µs while JavaScript, or a native it called, is on the main thread's stack: ` +
    `about ${(jsMs / 1000).toFixed(1)} s, ${pct(jsMs, windowMs)} of the window). A native called from JavaScript (a SQLite step) includes the system calls it makes; ` +
    "the rest of the time (uWebSockets parsing and writing, the kernel's TCP work, other threads) is in the perf section. Shares below are of the JS samples."
  )
}

function jsReport(js: JsSummary): string[] {
  const src = (key: string) => {
    const line = js.sources.get(key)
    return line ? `\`${line.replace(/\|/g, '\\|').replace(/`/g, "'")}\`` : ''
  }
  const share = (n: number) => pct(n, js.samples)
  return [
    '',
    '## JS samples by group',
    '',
    mdTable(
      ['group', 'samples', 'share'],
      js.groups.map(([g, n]) => [g, n, share(n)]),
    ),
    '',
    '## Top functions by self time',
    '',
    mdTable(
      ['self', 'inclusive', 'function', 'its first line'],
      js.selfTop.map((r) => [share(r.self), share(r.total), `\`${r.key}\``, src(r.key)]),
    ),
    '',
    '## Top functions by inclusive time',
    '',
    mdTable(
      ['inclusive', 'self', 'function', 'its first line'],
      js.totalTop.map((r) => [share(r.total), share(r.self), `\`${r.key}\``, src(r.key)]),
    ),
    '',
    '## Self time by module (natives by their JS caller)',
    '',
    mdTable(
      ['module', 'share'],
      js.modules.map(([m, n]) => [`\`${m}\``, share(n)]),
    ),
  ]
}

function perfReport(p: PerfSummary): string[] {
  const share = (n: number) => pct(n, p.samples)
  return [
    '',
    "## perf: all of the process's CPU time (cpu-clock, 999 Hz)",
    '',
    `${p.samples.toLocaleString('en')} samples; kernel ${share(p.kernelShare * p.samples)}, user space ${share((1 - p.kernelShare) * p.samples)}.`,
    '',
    mdTable(
      ['thread', 'share'],
      p.byThread.map(([t, n]) => [t, share(n)]),
    ),
    '',
    mdTable(
      ['kernel time by system call', 'share of all samples'],
      p.kernel.map(([k, n]) => [k, share(n)]),
    ),
    '',
    mdTable(
      ['user time by thread and code', 'share of all samples'],
      p.user.map(([k, n]) => [k, share(n)]),
    ),
  ]
}

async function main(): Promise<void> {
  const o = options()
  installCleanup(() => rmSync(RUN_DIR, { recursive: true, force: true }))
  process.on('exit', () => rmSync(RUN_DIR, { recursive: true, force: true }))
  requireTaskset()
  await ensureWrk()
  mkdirSync(RUN_DIR, { recursive: true })
  mkdirSync(OUT, { recursive: true })

  console.log('profile: building the profiling binary (bun build --compile --bytecode, not minified)')
  const b = await run(['bun', 'build', '--compile', '--bytecode', 'src/main.ts', 'src/articles/list-worker.ts', '--outfile', BINARY], {
    cwd: ROOT,
    timeoutMs: 300_000,
  })
  if (b.code !== 0) throw new Error(`the build failed: ${b.stderr}`)
  const spec = { articles: o.size, users: o.users, seed: o.seed }
  // SQLite: a copy of the seeded file; PostgreSQL: a database made from the seeded one (dropped at the end)
  const admin = o.backend === 'postgres' ? new PgAdmin(o.pgUrl) : undefined
  let db: string
  let dropWorkingCopy = async () => removeDatabase(db)
  if (admin) {
    const name = await pgWorkingCopy(admin, (await seededPostgres(admin, ROOT, BINARY, spec)).name)
    db = databaseUrl(o.pgUrl, name)
    dropWorkingCopy = async () => {
      await admin.drop(name, { force: true })
      await admin.close()
    }
  } else {
    db = workingCopy((await seededDatabase(ROOT, BINARY, TMP, spec)).file, join(RUN_DIR, 'work.db'))
  }

  await run(['taskset', '-a', '-p', '-c', String(LOAD_CORE), String(process.pid)], { timeoutMs: 5000 })
  const profDir = join(RUN_DIR, 'prof')
  mkdirSync(profDir, { recursive: true })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const t0 = performance.now()
  const server = spawn([BINARY, 'serve', '--port', String(port), '--host', '127.0.0.1', '--db', db], {
    core: SERVER_CORE,
    env: {
      LOG_LEVEL: 'warn',
      ...(o.js ? { BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir} --cpu-prof-interval=${o.intervalUs}` } : {}),
      ...(o.gcLog ? { BUN_JSC_logGC: 'true' } : {}),
    },
    stdout: 'inherit',
    stderr: o.gcLog ? 'pipe' : 'inherit',
  })
  const gcLines: GcLine[] = []
  if (o.gcLog) stampLines(server.stderr, gcLines)
  await waitForAnswer(`${base}/api/articles`, t0, server)
  console.log(`profile: server pid ${server.pid} on ${base}; logging in the mix's users`)
  const fixture = await discover(base, RUN_DIR, o.users, { mix: true, seed: o.seed })
  const writePct = MIX_VARIANTS[o.variant]
  const script = {
    kind: 'mix' as const,
    dataFile: fixture.mix!.dataFile,
    writePct,
    seed: o.seed * 100 + writePct,
    statuses: 'never' as const,
  }
  const common = { base, script, connections: o.connections, core: LOAD_CORE, tmpDir: RUN_DIR }
  if (o.warmupS > 0) await runWrk({ ...common, durationS: o.warmupS, phase: 'w' })

  const perfData = join(RUN_DIR, 'perf.data')
  const perfOk = o.perf && Bun.which('perf') !== null
  const perf = perfOk
    ? spawn(
        [
          'perf',
          'record',
          '-e',
          'cpu-clock',
          '-F',
          '999',
          '-g',
          '-p',
          String(server.pid),
          '-o',
          perfData,
          '--',
          'sleep',
          String(o.durationS),
        ],
        {
          core: LOAD_CORE,
          stdout: 'ignore',
          stderr: 'ignore',
        },
      )
    : undefined
  const cpuBefore = processCpuUs(server.pid)
  const coreBefore = coreTimes(SERVER_CORE)
  const fromUs = Date.now() * 1000
  const measured = await runWrk({ ...common, durationS: o.durationS, phase: 'm' })
  const toUs = Date.now() * 1000
  const serverCpuMs = (processCpuUs(server.pid) - cpuBefore) / 1000
  // perf itself runs on the load core; anything else on the server core is another process
  const others = coreShare(coreBefore, coreTimes(SERVER_CORE), serverCpuMs * 1000)
  if (perf) await perf.exited
  await stop(server, 15_000)
  let profile: CpuProfile | undefined
  if (o.js) {
    const profFile = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))
    if (!profFile) throw new Error(`the server wrote no CPU profile in ${profDir} (exit ${server.exitCode ?? server.signalCode})`)
    profile = JSON.parse(readFileSync(join(profDir, profFile), 'utf8')) as CpuProfile
  }
  const js = profile ? summariseJs(profile, fromUs, toUs, BINARY, o.top) : undefined
  const perfSummary = perf && existsSync(perfData) ? await summarisePerf(perfData) : undefined

  const windowMs = (toUs - fromUs) / 1000
  const out: string[] = []
  out.push(
    `# CPU profile: ${o.variant} (${writePct} % writes) at ${o.size.toLocaleString('en')} articles on ${o.backend === 'postgres' ? 'PostgreSQL' : 'SQLite'}`,
  )
  out.push('')
  out.push(
    `Commit ${(await run(['git', 'rev-parse', '--short', 'HEAD'], { cwd: ROOT })).stdout.trim()}, Bun ${Bun.version}; profiling build (not minified) pinned to core ${SERVER_CORE}, ` +
      `wrk on core ${LOAD_CORE}, ${o.connections} connections, ${o.warmupS} s warm-up then ${o.durationS} s measured; ` +
      (o.js ? `JS sampling every ${o.intervalUs} µs.` : 'no JS sampler (perf only).'),
  )
  out.push('')
  out.push(
    `Under the profiler: ${Math.round(measured.rps).toLocaleString('en')} req/s, p50 ${measured.latencyMs.p50.toFixed(2)} ms, p99 ${measured.latencyMs.p99.toFixed(2)} ms, ` +
      `${measured.errorCount} errors. Server CPU time in the window: ${(serverCpuMs / 1000).toFixed(1)} s of ${(windowMs / 1000).toFixed(1)} s (${pct(serverCpuMs, windowMs)} of a core); ` +
      `other processes took ${others.othersPct + others.stealPct} % of the server's core (interrupts ${others.irqPct} %).`,
  )
  if (js) out.push(jsCoverage(js, o.intervalUs, windowMs))
  if (o.gcLog) {
    const gc = summariseGc(gcLines, fromUs, toUs)
    out.push(
      `GC (BUN_JSC_logGC) in the window: ${gc.eden} eden and ${gc.full} full collections; pauses ${gc.pauseMs.toFixed(0)} ms in all ` +
        `(${pct(gc.pauseMs, windowMs)} of the window), whole cycles ${gc.cycleMs.toFixed(0)} ms (${pct(gc.cycleMs, windowMs)}); ` +
        `largest heap at a collection's start ${(gc.maxHeapKb / 1024).toFixed(0)} MB.`,
    )
  }
  const sent = measured.mix?.kinds ?? {}
  out.push('')
  out.push(
    `Requests sent in the measured run: ${Object.entries(sent)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  )
  if (js) out.push(...jsReport(js))
  if (perfSummary) out.push(...perfReport(perfSummary))
  else if (o.perf) out.push('', '(perf is not available here: no split of the time outside JavaScript)')
  const text = `${out.join('\n')}\n`
  const stamp = new Date()
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z')
  const base_ = join(
    OUT,
    `profile-${o.variant}-${o.size}-${o.backend === 'postgres' ? 'postgres-' : ''}${o.js ? '' : 'perf-only-'}${stamp}`,
  )
  writeFileSync(`${base_}.md`, text)
  if (profile) writeFileSync(`${base_}.cpuprofile`, JSON.stringify(profile))
  console.log(`\n${text}`)
  console.log(`wrote ${base_}.md${profile ? ` and ${base_}.cpuprofile` : ''}`)
  await dropWorkingCopy()
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`profile: ${(e as Error).message}`)
    process.exit(1)
  },
)
