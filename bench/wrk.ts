/**
 * The load generator: Debian's wrk, one thread, pinned to its own core. Every
 * run uses a Lua script whose done() hook prints the figures as one JSON line
 * (requests, duration, latency percentiles, socket and status errors).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './proc.ts'

export interface WrkResult {
  requests: number
  durationS: number
  rps: number
  bytes: number
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number }
  errors: { connect: number; read: number; write: number; timeout: number; status: number }
  /** socket errors + responses with a status > 399 */
  errorCount: number
  /** CPU time wrk itself used, as % of the run: near 100 means the load generator was the limit */
  wrkCpuPct: number
}

/** Appended to every script. wrk counts a status > 399 in errors.status. */
const DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%.0f,"duration_us":%.0f,"bytes":%.0f,' ..
    '"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f,' ..
    '"p50":%.0f,"p90":%.0f,"p99":%.0f,"max":%.0f,"mean":%.1f}\\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`

/** A fixed request (wrk pre-builds it once): method, path, headers and body come from the script. */
function fixedScript(method: string, path: string, headers: Record<string, string>, body?: string): string {
  const h = Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n')
  return `wrk.method = ${JSON.stringify(method)}
wrk.path = ${JSON.stringify(path)}
${h}
${body === undefined ? '' : `wrk.body = ${JSON.stringify(body)}`}
`
}

/**
 * POST /api/articles with a unique title per request: a per-thread counter
 * plus a random number plus a nonce that differs per run, so slugs never collide.
 * args: nonce, token, tagList (JSON array)
 */
const CREATE = `
local counter = 0
local nonce, tags
local headers = {}
local text = string.rep('Benchmark body text with a few words in it. ', 12)
init = function(args)
  nonce = args[1]
  headers['Authorization'] = 'Token ' .. args[2]
  headers['Content-Type'] = 'application/json'
  tags = args[3]
  math.randomseed(os.time() + tonumber(string.sub(nonce, 1, 6), 16))
end
request = function()
  counter = counter + 1
  local title = string.format('Bench %s %d %d', nonce, counter, math.random(1, 1000000000))
  local body = '{"article":{"title":"' .. title .. '","description":"An article made by the load test",' ..
    '"body":"' .. text .. '","tagList":' .. tags .. '}}'
  return wrk.format('POST', '/api/articles', headers, body)
end
`

/**
 * POST /api/articles/:slug/favorite over a list of slugs (one per line in a
 * file), walking every slug with the first token, then with the next, ... so
 * (user, article) pairs repeat only after slugs x tokens requests.
 * args: slugs file, tokens (comma-separated), start index
 */
const FAVORITE = `
local slugs = {}
local tokens = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do
    if #line > 0 then slugs[#slugs + 1] = line end
  end
  for t in string.gmatch(args[2], '[^,]+') do tokens[#tokens + 1] = 'Token ' .. t end
  i = tonumber(args[3]) or 0
end
request = function()
  i = i + 1
  local slug = slugs[(i % #slugs) + 1]
  local token = tokens[(math.floor(i / #slugs) % #tokens) + 1]
  return wrk.format('POST', '/api/articles/' .. slug .. '/favorite', { ['Authorization'] = token }, nil)
end
`

/**
 * GET of one path made unique per request by an extra query parameter the API
 * ignores: every request misses the response cache (the article items behind
 * it may still be cached), which shows the cost of building an answer.
 * args: path (with a query string), token or '' for anonymous
 */
const UNIQUE = `
local counter = 0
local path
local headers = {}
init = function(args)
  path = args[1]
  if args[2] ~= nil and #args[2] > 0 then headers['Authorization'] = 'Token ' .. args[2] end
  math.randomseed(os.time())
  counter = math.random(1, 1000000000)
end
request = function()
  counter = counter + 1
  return wrk.format('GET', path .. '&uncached=' .. counter, headers, nil)
end
`

export type WrkScript =
  | { kind: 'fixed'; method: string; path: string; headers: Record<string, string>; body?: string }
  | { kind: 'unique'; path: string; token: string }
  | { kind: 'create'; token: string; tagList: string[] }
  | { kind: 'favorite'; slugsFile: string; tokens: string[] }

let scriptCount = 0

/** Writes the script for one wrk run and returns its path and arguments. */
function prepare(dir: string, s: WrkScript, phase: string): { file: string; args: string[] } {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `wrk-${process.pid}-${++scriptCount}.lua`)
  switch (s.kind) {
    case 'fixed':
      writeFileSync(file, fixedScript(s.method, s.path, s.headers, s.body) + DONE)
      return { file, args: [] }
    case 'unique':
      writeFileSync(file, UNIQUE + DONE)
      return { file, args: [s.path, s.token] }
    case 'create': {
      writeFileSync(file, CREATE + DONE)
      const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex') + phase
      return { file, args: [nonce, s.token, JSON.stringify(s.tagList)] }
    }
    case 'favorite':
      writeFileSync(file, FAVORITE + DONE)
      // the measured run starts where the warm-up cannot have reached
      return { file, args: [s.slugsFile, s.tokens.join(','), phase === 'w' ? '0' : '100000'] }
  }
}

export interface WrkOptions {
  /** http://127.0.0.1:port */
  base: string
  script: WrkScript
  durationS: number
  connections: number
  core: number
  tmpDir: string
  /** 'w' for a warm-up, 'm' for a measured run */
  phase: 'w' | 'm'
}

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const { file, args } = prepare(o.tmpDir, o.script, o.phase)
  const cmd = [
    'wrk',
    '-t1',
    `-c${o.connections}`,
    `-d${o.durationS}s`,
    '--timeout',
    '5s',
    '-s',
    file,
    `${o.base}/`,
    ...(args.length ? ['--', ...args] : []),
  ]
  const r = await run(cmd, { core: o.core, timeoutMs: (o.durationS + 30) * 1000 })
  const line = r.stdout.split('\n').find((l) => l.startsWith('WRK_JSON '))
  if (r.code !== 0 || !line) {
    throw new Error(`wrk failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`)
  }
  const j = JSON.parse(line.slice('WRK_JSON '.length)) as Record<string, number>
  const n = (k: string) => j[k] ?? 0
  const errors = { connect: n('connect'), read: n('read'), write: n('write'), timeout: n('timeout'), status: n('status') }
  const durationS = n('duration_us') / 1e6
  return {
    requests: n('requests'),
    durationS,
    rps: durationS > 0 ? n('requests') / durationS : 0,
    bytes: n('bytes'),
    latencyMs: { p50: n('p50') / 1000, p90: n('p90') / 1000, p99: n('p99') / 1000, max: n('max') / 1000, mean: n('mean') / 1000 },
    errors,
    errorCount: errors.connect + errors.read + errors.write + errors.timeout + errors.status,
    wrkCpuPct: durationS > 0 ? Math.round(r.cpuUs / (durationS * 1e6) * 1000) / 10 : 0,
  }
}

/** wrk on PATH, or installed from Debian's packages when running as root. */
export async function ensureWrk(): Promise<void> {
  if (Bun.which('wrk')) return
  if (process.getuid?.() === 0 && Bun.which('apt-get')) {
    console.log('bench: wrk is missing; installing it with apt-get (Debian package "wrk")')
    const update = await run(['apt-get', 'update'], { stdout: 'inherit', stderr: 'inherit', timeoutMs: 300_000 })
    const install =
      update.code === 0 &&
      (await run(['apt-get', 'install', '-y', 'wrk'], {
        env: { DEBIAN_FRONTEND: 'noninteractive' },
        stdout: 'inherit',
        stderr: 'inherit',
        timeoutMs: 300_000,
      }))
    if (install && install.code === 0 && Bun.which('wrk')) return
  }
  throw new Error('wrk is not installed. Install it with: sudo apt-get install -y wrk  (Debian/Ubuntu package "wrk")')
}

export function requireTaskset(): void {
  if (!Bun.which('taskset')) {
    throw new Error('taskset is not installed. Install it with: sudo apt-get install -y util-linux')
  }
}
