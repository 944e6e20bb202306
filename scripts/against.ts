#!/usr/bin/env bun
/**
 * Runs a command (an outside test suite) against the compiled binary, checking every answer.
 *
 *   bun scripts/against.ts [--binary dist/conduit] [--database URL] [--instances N] [--pages] -- COMMAND ARGS...
 *
 * Serves the binary on a fresh SQLite file in a temporary directory, or on the PostgreSQL
 * database `--database` names, as N instances (default 1) behind a round-robin proxy: each
 * request goes to the next instance, so a write and the next read land on different ones. The
 * command runs with HOST (the proxy's origin) and APIURL (HOST/api) in its environment.
 *
 * Every answer under /api that passes the proxy is checked against the OpenAPI document the
 * binary serves (/swagger/json): its status among those the operation declares, its body
 * against that status's schema. At the end each instance is stopped with SIGTERM and must exit 0.
 * `--pages`: the command drives the web app, which may send nothing to /api itself; every other
 * answer must then be below 500.
 *
 * Prints one line per broken answer, then `contract: N answers checked, M broken`; exits with
 * the command's status, or 1 when an answer broke the document or an instance did not stop
 * cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js'

const { values: args, positionals: command } = parseArgs({
  options: {
    binary: { type: 'string', default: 'dist/conduit' },
    database: { type: 'string' },
    instances: { type: 'string', default: '1' },
    pages: { type: 'boolean', default: false },
  },
  allowPositionals: true,
  strict: true,
})
const INSTANCES = Number(args.instances)
if (!Number.isInteger(INSTANCES) || INSTANCES < 1 || INSTANCES > 8) throw new Error('--instances must be 1..8')
if (command.length === 0) throw new Error('no command to run: bun scripts/against.ts [options] -- COMMAND ARGS...')

const freePort = () => {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port
  s.stop(true)
  return port!
}

const dir = mkdtempSync(join(tmpdir(), 'conduit-against-'))
const env: Record<string, string> = { ...(process.env as Record<string, string>), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }
if (args.database) env.DATABASE_URL = args.database
else env.DATABASE_PATH = join(dir, 'conduit.db')

const servers = Array.from({ length: INSTANCES }, () => {
  const port = freePort()
  const log = Bun.file(join(dir, `server-${port}.log`))
  const proc = Bun.spawn({ cmd: [resolve(args.binary)], cwd: dir, env: { ...env, PORT: String(port) }, stdout: log, stderr: log })
  return { url: `http://127.0.0.1:${port}`, proc, log }
})

async function ready(url: string) {
  const until = Date.now() + 30_000
  while (Date.now() < until) {
    const ok = await fetch(`${url}/ready`)
      .then((r) => r.ok)
      .catch(() => false)
    if (ok) return
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not answer /ready within 30 s`)
}
// the first creates the schema; the others then start on it
for (const s of servers) await ready(s.url)

// ------------------------------------------------------------------ the served document
type Json = Record<string, any>
const doc = (await (await fetch(`${servers[0]!.url}/swagger/json`)).json()) as Json
const resolveRefs = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema), (_k, v) =>
    v && typeof v === 'object' && typeof v.$ref === 'string'
      ? resolveRefs(
          v.$ref
            .replace(/^#\//, '')
            .split('/')
            .reduce((o: Json, k: string) => o[k], doc),
        )
      : v,
  )
const ajv = new Ajv2020({ strict: false, validateFormats: false, allowUnionTypes: true })
interface Operation {
  name: string
  pattern: RegExp
  responses: Map<string, ValidateFunction | null>
}
const operations = new Map<string, Operation[]>()
for (const [path, methods] of Object.entries(doc.paths as Json)) {
  for (const [method, op] of Object.entries(methods as Json)) {
    const responses = new Map<string, ValidateFunction | null>()
    for (const [status, r] of Object.entries(op.responses as Json)) {
      const schema = (resolveRefs(r) as Json).content?.['application/json']?.schema
      responses.set(status, schema ? ajv.compile(schema) : null)
    }
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`)
    const list = operations.get(method.toUpperCase()) ?? []
    list.push({ name: `${method.toUpperCase()} ${path}`, pattern, responses })
    operations.set(method.toUpperCase(), list)
  }
}
// a path without parameters before one with (`/api/articles/feed` is not `/api/articles/{slug}`)
for (const list of operations.values()) list.sort((a, b) => a.pattern.source.split('[^/]+').length - b.pattern.source.split('[^/]+').length)

let checked = 0
const broken: string[] = []
function check(method: string, path: string, status: number, text: string) {
  if (args.pages && !path.startsWith('/api/') && status >= 500) broken.push(`${method} ${path} answered ${status}`)
  if (!path.startsWith('/api/') || method === 'OPTIONS') return
  checked++
  const op = operations.get(method)?.find((o) => o.pattern.test(path))
  const where = `${method} ${path} answered ${status}`
  // a path no operation has: the router's own 404, in the error envelope
  const validate = op ? op.responses.get(String(status)) : status === 404 ? operations.get('GET')![0]!.responses.get('404') : undefined
  if (validate === undefined) return void broken.push(`${where}: not a status ${op?.name ?? 'any operation'} declares`)
  if (validate === null) return void (text === '' || broken.push(`${where}: a body where the document declares none`))
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return void broken.push(`${where}: not JSON`)
  }
  if (!validate(body)) broken.push(`${where}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 200)}`)
}

// ------------------------------------------------------------------ the proxy
let next = 0
const proxy = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const backend = servers[next++ % servers.length]!
    const url = new URL(request.url)
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
    const headers = new Headers(request.headers)
    headers.delete('host')
    const res = await fetch(`${backend.url}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: 'manual' })
    const bytes = await res.arrayBuffer()
    check(request.method, url.pathname, res.status, new TextDecoder().decode(bytes))
    const out = new Headers(res.headers)
    out.delete('content-encoding')
    out.delete('content-length')
    return new Response(bytes, { status: res.status, headers: out })
  },
})

const origin = `http://127.0.0.1:${proxy.port}`
console.error(`against.ts: ${INSTANCES} instance(s) of ${args.binary} on ${args.database ? 'PostgreSQL' : 'SQLite'} behind ${origin}`)
const run = Bun.spawn({
  cmd: command,
  env: { ...process.env, HOST: origin, APIURL: `${origin}/api` },
  stdout: 'inherit',
  stderr: 'inherit',
})
const code = await run.exited
proxy.stop(true)

let stopped = true
for (const s of servers) {
  s.proc.kill('SIGTERM')
  const exit = await Promise.race([s.proc.exited, Bun.sleep(15_000).then(() => 'timeout' as const)])
  if (exit !== 0) {
    stopped = false
    if (exit === 'timeout') s.proc.kill('SIGKILL')
    console.log(`instance ${s.url} exited ${exit} on SIGTERM; its log:\n${await s.log.text()}`)
  }
}
rmSync(dir, { recursive: true, force: true })

for (const b of broken.slice(0, 20)) console.log(`BROKEN ${b}`)
console.log(`contract: ${checked} answers checked, ${broken.length} broken`)
process.exit(code !== 0 ? code : broken.length || !stopped || (checked === 0 && !args.pages) ? 1 : 0)
