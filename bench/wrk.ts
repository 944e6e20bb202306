/**
 * The load generator: Debian's wrk, one thread, pinned to its own core. Every
 * run uses a Lua script whose done() hook prints the figures as one JSON line
 * (requests, duration, latency percentiles, socket and status errors).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SENT_HEADER } from '../src/trace.ts'
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
  /** mix script only: requests sent per kind, and (when counted) responses per status code */
  mix?: { kinds: Record<string, number>; statuses: Record<string, number> | null }
}

/**
 * Appended to every script. wrk counts a status > 399 in errors.status. A
 * script may define extra_done() to print more (the mix prints its counts).
 */
const DONE = `
done = function(summary, latency, requests)
  if extra_done then extra_done() end
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
 * file) by several users in turn: consecutive requests (those in flight
 * together) come from different users, as on a real site, where one user does
 * not favorite 64 articles at once (on PostgreSQL that user's row, whose
 * favorites count every favorite updates, would make them queue), on
 * different articles (likewise for the article's count). Request i favorites
 * slug i mod S as user (i mod S + i div S) mod T: over T laps of the slugs
 * every user meets every slug once, so (user, article) pairs repeat only
 * after S x T requests.
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
  local s = i % #slugs
  local slug = slugs[s + 1]
  local token = tokens[((s + math.floor(i / #slugs)) % #tokens) + 1]
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
  for k, v in pairs(extra_headers or {}) do headers[k] = v end
  math.randomseed(os.time())
  counter = math.random(1, 1000000000)
end
request = function()
  counter = counter + 1
  return wrk.format('GET', path .. '&uncached=' .. counter, headers, nil)
end
`

/**
 * The mixed traffic: every request drawn at random (seeded per thread, so a
 * run replays) from a distribution of reads and writes. Popularity is Zipf-
 * like: the k-th most popular slug, tag or user is asked for in proportion to
 * k^-s, list pages likewise by page number. The weights are filled in from
 * MIX (below) when the script is written.
 * args: data file (lines "S <slug>", "T <tag>", "U <username>", "K <token>",
 *       "P <pages>"; slugs, tags and usernames URL-safe), write share (0..1),
 *       seed, nonce (unique per wrk run, for titles)
 */
const MIX_LUA = `
local slugs, tags, users, tokens = {}, {}, {}, {}
local slugCdf, tagCdf, userCdf, pageCdf
local anon, authGet, authJson = {}, {}, {}
local writeShare, nonce, counter, tid = 0, '', 0, 1
local text = string.rep('Mixed traffic article body, a few sentences long. ', 12)
local threads = {}
mix_counts = {}
mix_statuses = {}

-- cumulative Zipf weights of ranks 1..n with exponent s
local function zipf(n, s)
  local c, sum = {}, 0
  for k = 1, n do
    sum = sum + k ^ (-s)
    c[k] = sum
  end
  for k = 1, n do c[k] = c[k] / sum end
  c[n] = 1
  return c
end

-- a rank drawn from cumulative weights (binary search)
local function draw(c)
  local u = math.random()
  local lo, hi = 1, #c
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if c[mid] < u then lo = mid + 1 else hi = mid end
  end
  return lo
end

local function pick(cum)
  local u = math.random()
  for i = 1, #cum do
    if u < cum[i][2] then return cum[i][1] end
  end
  return cum[#cum][1]
end

local function count(kind)
  mix_counts[kind] = (mix_counts[kind] or 0) + 1
end

setup = function(thread)
  threads[#threads + 1] = thread
  thread:set('thread_index', #threads)
end

init = function(args)
  tid = thread_index or 1
  local pages = 1
  for line in io.lines(args[1]) do
    local k, v = string.sub(line, 1, 1), string.sub(line, 3)
    if k == 'S' then slugs[#slugs + 1] = v
    elseif k == 'T' then tags[#tags + 1] = v
    elseif k == 'U' then users[#users + 1] = v
    elseif k == 'K' then tokens[#tokens + 1] = v
    elseif k == 'P' then pages = tonumber(v) end
  end
  writeShare = tonumber(args[2])
  math.randomseed(tonumber(args[3]) * 1000 + tid)
  nonce = args[4]
  for i, t in ipairs(tokens) do
    authGet[i] = { ['Authorization'] = 'Token ' .. t }
    authJson[i] = { ['Authorization'] = 'Token ' .. t, ['Content-Type'] = 'application/json' }
  end
  slugCdf = zipf(#slugs, __SLUG_S__)
  tagCdf = zipf(#tags, __TAG_S__)
  userCdf = zipf(#users, __USER_S__)
  pageCdf = zipf(pages, __PAGE_S__)
end

local READS = __READS__
local WRITES = __WRITES__
-- the share of reads other than feeds that carry a token
local AUTH_OTHER = __AUTH_OTHER__

local function read()
  local kind = pick(READS)
  count(kind)
  local h = anon
  if kind == 'feed' or math.random() < AUTH_OTHER then
    h = authGet[math.random(#tokens)]
    count('auth')
  end
  local path
  if kind == 'list' then path = '/api/articles?limit=20&offset=' .. ((draw(pageCdf) - 1) * 20)
  elseif kind == 'article' then path = '/api/articles/' .. slugs[draw(slugCdf)]
  elseif kind == 'comments' then path = '/api/articles/' .. slugs[draw(slugCdf)] .. '/comments'
  elseif kind == 'tag' then path = '/api/articles?tag=' .. tags[draw(tagCdf)]
  elseif kind == 'author' then path = '/api/articles?author=' .. users[draw(userCdf)]
  elseif kind == 'favorited' then path = '/api/articles?favorited=' .. users[draw(userCdf)]
  elseif kind == 'feed' then path = '/api/articles/feed'
  elseif kind == 'profile' then path = '/api/profiles/' .. users[draw(userCdf)]
  else path = '/api/tags' end
  return wrk.format('GET', path, h, nil)
end

local function write()
  local kind = pick(WRITES)
  local t = math.random(#tokens)
  counter = counter + 1
  if kind == 'favorite' then
    local path = '/api/articles/' .. slugs[draw(slugCdf)] .. '/favorite'
    if math.random() < 0.5 then
      count('favorite')
      return wrk.format('POST', path, authGet[t], nil)
    end
    count('unfavorite')
    return wrk.format('DELETE', path, authGet[t], nil)
  elseif kind == 'comment' then
    count('comment')
    local body = '{"comment":{"body":"A comment of the mixed traffic ' .. nonce .. ' ' .. tid .. ' ' .. counter .. '"}}'
    return wrk.format('POST', '/api/articles/' .. slugs[draw(slugCdf)] .. '/comments', authJson[t], body)
  end
  count('create')
  local a, b = draw(tagCdf), draw(tagCdf)
  if b == a then b = (a % #tags) + 1 end
  local title = 'Mix ' .. nonce .. ' ' .. tid .. ' ' .. counter .. ' ' .. math.random(1, 1000000000)
  local body = '{"article":{"title":"' .. title .. '","description":"An article of the mixed traffic",' ..
    '"body":"' .. text .. '","tagList":["' .. tags[a] .. '","' .. tags[b] .. '"]}}'
  return wrk.format('POST', '/api/articles', authJson[t], body)
end

request = function()
  if writeShare > 0 and math.random() < writeShare then return write() end
  return read()
end

local function object(t)
  local parts = {}
  for k, v in pairs(t) do parts[#parts + 1] = string.format('"%s":%.0f', tostring(k), v) end
  return '{' .. table.concat(parts, ',') .. '}'
end

extra_done = function()
  local kinds, statuses, counted = {}, {}, false
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get('mix_counts') or {}) do kinds[k] = (kinds[k] or 0) + v end
    for k, v in pairs(t:get('mix_statuses') or {}) do
      statuses[k] = (statuses[k] or 0) + v
      counted = true
    end
  end
  io.write('WRK_MIX {"kinds":' .. object(kinds) .. ',"statuses":' .. (counted and object(statuses) or 'null') .. '}\\n')
end
`

/**
 * Defining response() makes wrk keep every response's headers and body for
 * Lua, which costs the load generator time; only added where statuses are counted.
 */
const MIX_STATUSES = `
response = function(status, headers, body)
  mix_statuses[status] = (mix_statuses[status] or 0) + 1
end
`

/**
 * Wraps the script's request(): each request carries the wall-clock time it
 * is sent at (wrk builds a request as its socket can take it), in epoch
 * microseconds, read through LuaJIT's FFI.
 */
const STAMP = `
local ffi = require('ffi')
ffi.cdef[[
typedef struct { long sec; long nsec; } trace_timespec;
int clock_gettime(int clock, trace_timespec *tp);
]]
local now = ffi.new('trace_timespec')
local unstamped = request
request = function()
  local r = unstamped()
  ffi.C.clock_gettime(0, now)
  local us = string.format('%d', tonumber(now.sec) * 1000000 + math.floor(tonumber(now.nsec) / 1000))
  return (string.gsub(r, '\\r\\n', '\\r\\n${SENT_HEADER}: ' .. us .. '\\r\\n', 1))
end
`

/** The mixed traffic's shape: shares of reads and of writes (%), the Zipf exponents. */
export const MIX = {
  reads: { list: 30, article: 25, comments: 8, tag: 10, author: 5, favorited: 4, feed: 10, profile: 4, tags: 4 },
  writes: { favorite: 60, comment: 25, create: 15 },
  /** % of all reads that carry a token; feeds always do, so the others do with (authPct - feed) / (100 - feed) */
  authPct: 30,
  zipf: { slug: 1.0, tag: 1.0, user: 1.0, page: 2.0 },
  pageSize: 20,
} as const

/** Lua table of {kind, cumulative share} pairs. */
function cumulative(shares: Record<string, number>): string {
  const total = Object.values(shares).reduce((a, b) => a + b, 0)
  let sum = 0
  const rows = Object.entries(shares).map(([k, v]) => {
    sum += v
    return `{ ${JSON.stringify(k)}, ${sum === total ? 1 : sum / total} }`
  })
  return `{ ${rows.join(', ')} }`
}

function mixScript(countStatuses: boolean): string {
  const feed = MIX.reads.feed
  const authOther = (MIX.authPct - feed) / (100 - feed)
  return (
    MIX_LUA.replace('__READS__', cumulative(MIX.reads))
      .replace('__WRITES__', cumulative(MIX.writes))
      .replace('__AUTH_OTHER__', String(authOther))
      .replace('__SLUG_S__', String(MIX.zipf.slug))
      .replace('__TAG_S__', String(MIX.zipf.tag))
      .replace('__USER_S__', String(MIX.zipf.user))
      .replace('__PAGE_S__', String(MIX.zipf.page)) + (countStatuses ? MIX_STATUSES : '')
  )
}

export type WrkScript =
  | { kind: 'fixed'; method: string; path: string; headers: Record<string, string>; body?: string }
  | { kind: 'unique'; path: string; token: string; headers?: Record<string, string> }
  | { kind: 'create'; token: string; tagList: string[] }
  | { kind: 'favorite'; slugsFile: string; tokens: string[] }
  /** writePct: % of all requests that are writes; statuses: count responses per status in these phases */
  | {
      kind: 'mix'
      dataFile: string
      writePct: number
      seed: number
      statuses: 'never' | 'warmup' | 'always'
      /** each request carries when it was sent (src/trace.ts's header, for bench/tail.ts) */
      stamp?: boolean
    }

let scriptCount = 0

/** Writes the script for one wrk run and returns its path and arguments. */
function prepare(dir: string, s: WrkScript, phase: string): { file: string; args: string[] } {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `wrk-${process.pid}-${++scriptCount}.lua`)
  switch (s.kind) {
    case 'fixed':
      writeFileSync(file, fixedScript(s.method, s.path, s.headers, s.body) + DONE)
      return { file, args: [] }
    case 'unique': {
      const extra = Object.entries(s.headers ?? {}).map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
      writeFileSync(file, `extra_headers = { ${extra.join(', ')} }\n${UNIQUE}${DONE}`)
      return { file, args: [s.path, s.token] }
    }
    case 'create': {
      writeFileSync(file, CREATE + DONE)
      const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex') + phase
      return { file, args: [nonce, s.token, JSON.stringify(s.tagList)] }
    }
    case 'favorite':
      writeFileSync(file, FAVORITE + DONE)
      // the measured run starts where the warm-up cannot have reached
      return { file, args: [s.slugsFile, s.tokens.join(','), phase === 'w' ? '0' : '100000'] }
    case 'mix': {
      const count = s.statuses === 'always' || (s.statuses === 'warmup' && phase === 'w')
      writeFileSync(file, mixScript(count) + (s.stamp ? STAMP : '') + DONE)
      // the warm-up draws another sequence than the measured run (which the server and the bound share)
      const seed = s.seed * 2 + (phase === 'w' ? 0 : 1)
      const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex') + phase
      return { file, args: [s.dataFile, String(s.writePct / 100), String(seed), nonce] }
    }
  }
}

interface WrkOptions {
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
  const mixLine = r.stdout.split('\n').find((l) => l.startsWith('WRK_MIX '))
  const mix = mixLine ? (JSON.parse(mixLine.slice('WRK_MIX '.length)) as WrkResult['mix']) : undefined
  return {
    requests: n('requests'),
    durationS,
    rps: durationS > 0 ? n('requests') / durationS : 0,
    bytes: n('bytes'),
    latencyMs: { p50: n('p50') / 1000, p90: n('p90') / 1000, p99: n('p99') / 1000, max: n('max') / 1000, mean: n('mean') / 1000 },
    errors,
    errorCount: errors.connect + errors.read + errors.write + errors.timeout + errors.status,
    wrkCpuPct: durationS > 0 ? Math.round((r.cpuUs / (durationS * 1e6)) * 1000) / 10 : 0,
    ...(mix ? { mix } : {}),
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
