/**
 * Child processes of the benchmark: every one is tracked and stopped when the
 * run ends, fails or is interrupted (Ctrl-C, SIGTERM), so nothing outlives it.
 * Also what the scripts share of their own process: cleanup, CPU, --help.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

type Child = ReturnType<typeof Bun.spawn>

const children = new Set<Child>()

interface SpawnOptions {
  env?: Record<string, string | undefined>
  cwd?: string
  /** where stdout goes; 'pipe' to read it (default 'inherit') */
  stdout?: 'pipe' | 'inherit' | 'ignore'
  stderr?: 'pipe' | 'inherit' | 'ignore'
  /**
   * pin to this CPU core, or these cores ("0,1"), with taskset (taskset execs
   * the command: the pid is the command's; its children inherit the mask)
   */
  core?: number | string
}

export function spawn(cmd: string[], o: SpawnOptions = {}): Child {
  const argv = o.core === undefined ? cmd : ['taskset', '-c', String(o.core), ...cmd]
  const child = Bun.spawn(argv, {
    cwd: o.cwd,
    env: { ...process.env, ...o.env },
    stdin: 'ignore',
    stdout: o.stdout ?? 'inherit',
    stderr: o.stderr ?? 'inherit',
  })
  children.add(child)
  void child.exited.then(() => children.delete(child))
  return child
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stop(child: Child, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await child.exited
  clearTimeout(timer)
}

/** Runs a command to completion (bounded by `timeoutMs`) and returns its output. */
export async function run(
  cmd: string[],
  o: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string; cpuUs: number }> {
  const child = spawn(cmd, { ...o, stdout: o.stdout ?? 'pipe', stderr: o.stderr ?? 'pipe' })
  const timer = o.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), o.timeoutMs) : undefined
  const [stdout, stderr, code] = await Promise.all([
    child.stdout instanceof ReadableStream ? new Response(child.stdout).text() : '',
    child.stderr instanceof ReadableStream ? new Response(child.stderr).text() : '',
    child.exited,
  ])
  if (timer) clearTimeout(timer)
  return { code, stdout, stderr, cpuUs: Number(child.resourceUsage()?.cpuTime.total ?? 0) }
}

let cleaningUp = false

/** True once Ctrl-C / SIGTERM started the cleanup: failures after that are expected. */
export const interrupted = () => cleaningUp

/** Asynchronous clean-ups (e.g. dropping a working database), run once the children are stopped. */
const asyncCleanups = new Set<() => Promise<void>>()

/** Registers `fn` to run at the end (runCleanups) or on Ctrl-C / SIGTERM; returns a function that unregisters it. */
export function onCleanup(fn: () => Promise<void>): () => void {
  asyncCleanups.add(fn)
  return () => asyncCleanups.delete(fn)
}

/**
 * Runs (and forgets) the registered clean-ups, the last registered first (a
 * working database is dropped before the connection that drops it closes),
 * each bounded by `timeoutMs`; failures are printed, not thrown.
 */
export async function runCleanups(timeoutMs = 10_000): Promise<void> {
  const fns = [...asyncCleanups].reverse()
  asyncCleanups.clear()
  for (const fn of fns) {
    let timer: Timer | undefined
    const late = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`a clean-up took over ${timeoutMs} ms`)), timeoutMs)),
    )
    await Promise.race([fn(), late])
      .catch((e) => console.error(`bench: clean-up failed: ${(e as Error).message}`))
      .finally(() => clearTimeout(timer))
  }
}

/** Stops every child on exit and on Ctrl-C / SIGTERM (then runs the clean-ups and exits 130 / 143). */
export function installCleanup(onInterrupt?: () => void): void {
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL')
  })
  const onSignal = (signal: 'SIGINT' | 'SIGTERM', code: number) => {
    if (cleaningUp) return
    cleaningUp = true
    console.error(`\nbench: ${signal}, stopping ${children.size} child process(es)`)
    onInterrupt?.()
    const all = [...children].map((c) => stop(c, 2000))
    const deadline = Bun.sleep(3000)
    void Promise.race([Promise.all(all), deadline])
      .then(() => runCleanups())
      .then(() => process.exit(code))
  }
  process.on('SIGINT', () => onSignal('SIGINT', 130))
  process.on('SIGTERM', () => onSignal('SIGTERM', 143))
}

/** Pids of the children of `pid` (pgrep -P). */
export async function childPids(pid: number): Promise<number[]> {
  const r = await run(['pgrep', '-P', String(pid)], { timeoutMs: 5000 })
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b)
}

/** Inodes of the sockets listening on TCP `port` (IPv4 and IPv6), from /proc/net/tcp*. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>()
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = ''
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (f.length < 10 || f[3] !== '0A' || !f[1]!.endsWith(`:${hexPort}`)) continue
      inodes.add(f[9]!)
    }
  }
  return inodes
}

/** Which of `pids` hold a socket listening on TCP `port` (SO_REUSEPORT: each instance has its own). */
export function listeningPids(port: number, pids: number[]): number[] {
  const inodes = listeningInodes(port)
  return pids.filter((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
          return m !== null && inodes.has(m[1]!)
        } catch {
          return false
        }
      })
    } catch {
      return false
    }
  })
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

/**
 * Polls `url` until it answers 2xx. Returns the milliseconds from `since`
 * (a performance.now() value) to that first answer.
 */
export async function waitForAnswer(url: string, since: number, child: Child, timeoutMs = 60_000): Promise<number> {
  const deadline = since + timeoutMs
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the process exited (${child.exitCode ?? child.signalCode}) before answering ${url}`)
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
      await res.arrayBuffer()
      if (res.ok) return performance.now() - since
    } catch {
      // not listening yet
    }
    await Bun.sleep(1)
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`)
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/**
 * Samples VmRSS every `everyMs`: the peak over the whole life and per window.
 * With several processes (several instances of the server) a sample is the
 * sum of their VmRSS.
 */
export function rssSampler(pids: number | number[], everyMs = 200) {
  const list = Array.isArray(pids) ? pids : [pids]
  const total = (field: 'VmRSS' | 'VmHWM'): number | undefined => {
    let sum = 0
    for (const pid of list) {
      const kb = statusKb(pid, field)
      if (kb === undefined) return undefined
      sum += kb
    }
    return sum
  }
  let peak = 0
  let windowPeak = 0
  let samples = 0
  const sample = () => {
    const rss = total('VmRSS')
    if (rss === undefined) return
    samples++
    if (rss > peak) peak = rss
    if (rss > windowPeak) windowPeak = rss
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    /** peak VmRSS seen since the start, in bytes */
    peak: () => peak,
    samples: () => samples,
    /** starts a new window (e.g. one endpoint) */
    resetWindow() {
      sample()
      windowPeak = total('VmRSS') ?? 0
    },
    /** peak VmRSS seen in the current window, in bytes */
    windowPeak() {
      sample()
      return windowPeak
    },
    /** the kernel's own high-water mark (VmHWM; summed over the processes), in bytes */
    highWaterMark: () => total('VmHWM'),
    stop() {
      sample()
      clearInterval(timer)
    },
  }
}

/** USER_HZ: the unit of /proc/stat and /proc/<pid>/stat times (100 on Linux). */
const TICK_US = 10_000

interface CoreTimes {
  /** microseconds the core spent running processes (user, nice, system) */
  busy: number
  /** microseconds in interrupt and softirq handlers: mostly the loopback traffic of the benchmark itself */
  irq: number
  /** microseconds the hypervisor took the core away */
  steal: number
  total: number
}

/** Cumulative times of one core from /proc/stat (several cores: their sum). */
export function coreTimes(core: number | number[]): CoreTimes {
  if (Array.isArray(core)) {
    return core
      .map((c) => coreTimes(c))
      .reduce((a, b) => ({ busy: a.busy + b.busy, irq: a.irq + b.irq, steal: a.steal + b.steal, total: a.total + b.total }))
  }
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${core} `))
    const f = (line ?? '').trim().split(/\s+/).slice(1, 9).map(Number)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f
    return {
      busy: (user + nice + system) * TICK_US,
      irq: (irq + softirq) * TICK_US,
      steal: steal * TICK_US,
      total: (user + nice + system + idle + iowait + irq + softirq + steal) * TICK_US,
    }
  } catch {
    return { busy: 0, irq: 0, steal: 0, total: 0 }
  }
}

/** CPU time (user + system, all threads) live processes have used, in microseconds. */
export function processCpuUs(pids: number | number[]): number {
  if (Array.isArray(pids)) return pids.reduce((sum, pid) => sum + processCpuUs(pid), 0)
  const pid = pids
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(rest[11]) + Number(rest[12])) * TICK_US
  } catch {
    return 0
  }
}

export interface CoreShare {
  /** % of the core's time used by processes other than the measured ones */
  othersPct: number
  /** % of the core's time taken by the hypervisor */
  stealPct: number
  /** % of the core's time in interrupt / softirq handlers (network processing, counted apart from processes) */
  irqPct: number
}

/**
 * How much of `core` went elsewhere between two snapshots, given the CPU time
 * of the processes meant to run there. For snapshots of several cores
 * (coreTimes([0, 1])) pass their count as `cores`: the shares are then of one
 * core's time (up to cores x 100 %).
 */
export function coreShare(before: CoreTimes, after: CoreTimes, ownUs: number, cores = 1): CoreShare {
  const total = (after.total - before.total) / cores
  if (total <= 0) return { othersPct: 0, stealPct: 0, irqPct: 0 }
  const pct = (x: number) => Math.round((Math.max(0, x) / total) * 1000) / 10
  return {
    othersPct: pct(after.busy - before.busy - ownUs),
    stealPct: pct(after.steal - before.steal),
    irqPct: pct(after.irq - before.irq),
  }
}

/** CPU time used so far by each of `pids`, in microseconds (a snapshot for cpuSince). */
export function cpuSnapshot(pids: number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, processCpuUs(pid)]))
}

/**
 * CPU time the processes used since `before`, over the pids of the snapshot
 * and `now` (processes that started meanwhile count from zero; one that ended
 * meanwhile loses its last stretch).
 */
export function cpuSince(before: Map<number, number>, now: number[]): number {
  let us = 0
  for (const pid of new Set([...before.keys(), ...now])) us += Math.max(0, processCpuUs(pid) - (before.get(pid) ?? 0))
  return us
}

/** Prints a script's header comment, which is its usage, and exits. */
export function printUsage(script: string): never {
  console.log(
    readFileSync(script, 'utf8')
      .split(' */')[0]!
      .replace(/^\/\*\*\n|^ \* ?/gm, ''),
  )
  process.exit(0)
}
