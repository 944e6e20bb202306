import { afterAll, beforeAll, expect } from 'bun:test'
import { chmodSync, copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'
import { createApp } from '../../src/app.ts'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { sqliteStore } from '../../src/db/sqlite/store.ts'
import type { Route } from '../../src/http/route.ts'
import { testConfig } from '../support/app.ts'
import { binaryDatabase, onPostgres } from '../support/backend.ts'
import { type ContractOptions, checkAnswer } from '../support/contract.ts'
import { buildCommand } from '../../scripts/build-command.ts'

/**
 * End-to-end support: builds the compiled binary exactly as it ships
 * (`bun build --compile --bytecode --minify src/main.ts`), runs copies of it
 * from empty directories and talks to them over 127.0.0.1 only.
 *
 * Every wait is bounded, every process and temp directory is tracked and
 * removed in afterAll, whatever the tests did.
 *
 * CONDUIT_E2E_BINARY=/path/to/conduit tests a prebuilt binary instead of
 * building one (e.g. a release artifact).
 */

export const ROOT = resolve(import.meta.dir, '../..')
const BUILD_TIMEOUT_MS = 120_000
const READY_TIMEOUT_MS = 10_000
const STOP_TIMEOUT_MS = 10_000
const CLI_TIMEOUT_MS = 20_000

const processes = new Set<Subprocess>()
const tempDirs = new Set<string>()

export function tempDir(prefix = 'conduit-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

/** A promise that rejects after `ms`, for racing against anything that could hang. */
function deadline<T = never>(ms: number, what: string): { promise: Promise<T>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  const promise = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)
  })
  return { promise, cancel: () => clearTimeout(timer) }
}

export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const d = deadline<T>(ms, what)
  try {
    return await Promise.race([work, d.promise])
  } finally {
    d.cancel()
  }
}

/** Reads a stream to the end in the background; `text` grows as output arrives. */
function collect(stream: ReadableStream<Uint8Array> | undefined | number | null) {
  const sink = { text: '', done: Promise.resolve() }
  if (!stream || typeof stream === 'number') return sink
  const decoder = new TextDecoder()
  sink.done = (async () => {
    for await (const chunk of stream) sink.text += decoder.decode(chunk, { stream: true })
    sink.text += decoder.decode()
  })().catch(() => {})
  return sink
}

/** Builds the binary into a fresh temp directory; returns its path. */
export async function buildBinary(): Promise<string> {
  const prebuilt = process.env.CONDUIT_E2E_BINARY
  if (prebuilt) return resolve(prebuilt)
  return compile(ROOT)
}

/**
 * Builds the binary from a copy of the source tree, then removes the copy: a binary that still
 * read a file of its build at run time (as `import.meta.url` names it) fails, as on a user's machine.
 */
export async function buildBinaryAway(): Promise<string> {
  const tree = mkdtempSync(join(tmpdir(), 'conduit-e2e-tree-'))
  try {
    for (const f of ['src', 'package.json', 'tsconfig.json', 'bunfig.toml']) cpSync(join(ROOT, f), join(tree, f), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'))
    return await compile(tree)
  } finally {
    rmSync(tree, { recursive: true, force: true })
  }
}

async function compile(root: string): Promise<string> {
  const outfile = join(tempDir('conduit-e2e-build-'), 'conduit')
  const proc = Bun.spawn({
    cmd: buildCommand(outfile),
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  processes.add(proc)
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)
  try {
    const code = await withTimeout(proc.exited, BUILD_TIMEOUT_MS, 'bun build --compile')
    if (code !== 0) throw new Error(`bun build --compile failed (exit ${code}):\n${out.text}\n${err.text}`)
  } finally {
    proc.kill('SIGKILL')
    processes.delete(proc)
  }
  return outfile
}

/** Copies the binary alone into a new empty directory; returns the directory. */
export function installBinary(binary: string): string {
  const dir = tempDir()
  const target = join(dir, 'conduit')
  copyFileSync(binary, target)
  chmodSync(target, 0o755)
  return dir
}

/**
 * Registers beforeAll (build) and afterAll (kill leftovers, remove temp dirs)
 * hooks in the calling test file; returns the built binary's path getter.
 */
export function useBinary(): () => string {
  let path: string | undefined
  beforeAll(async () => {
    path = await buildBinary()
  }, BUILD_TIMEOUT_MS + 5_000)
  afterAll(cleanup)
  return () => {
    if (!path) throw new Error('the binary was not built (see the beforeAll failure)')
    return path
  }
}

/** Kills every process this module started that is still running and removes the temp directories. */
export async function cleanup(): Promise<void> {
  for (const proc of processes) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    await withTimeout(proc.exited, 5_000, `exit of leftover pid ${proc.pid}`).catch(() => {})
  }
  processes.clear()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}

/** A port nothing listens on right now (the kernel picks it). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: '0.0.0.0', port: 0, socket: { data() {} } })
  const port = listener.port
  listener.stop(true)
  return port
}

/** Whether `port` can be bound on every interface (so the binary's default 0.0.0.0 bind would work). */
export function portIsFree(port: number): boolean {
  try {
    const listener = Bun.listen({ hostname: '0.0.0.0', port, socket: { data() {} } })
    listener.stop(true)
    return true
  } catch {
    return false
  }
}

export interface StopResult {
  /** exit code, null when killed by a signal */
  code: number | null
  signal: number | NodeJS.Signals | null
  /** time from the signal to the process exit */
  ms: number
  /** the process did not exit in time and was SIGKILLed */
  timedOut: boolean
}

export interface Server {
  proc: Subprocess
  dir: string
  port: number
  /** http://127.0.0.1:PORT */
  url: string
  stdout(): string
  stderr(): string
  /** Waits (bounded) until the output so far satisfies `check`; returns the output. */
  waitForStdout(check: (stdout: string) => boolean, timeoutMs?: number): Promise<string>
  /** Sends `signal` (SIGTERM by default) and waits for the exit, SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<StopResult>
}

export interface StartOptions {
  /** run in this directory (must contain ./conduit); default: a fresh copy of the binary */
  dir?: string
  /** port to pass as PORT; `null` passes no PORT at all (the binary then uses 3000) */
  port?: number | null
  /** extra environment on top of PATH and HOME (and PORT) */
  env?: Record<string, string>
  /** use exactly this environment (plus PORT unless port is null): nothing inherited */
  exactEnv?: Record<string, string>
  args?: string[]
  /** a command that runs the binary (`['nohup']`) */
  wrapper?: string[]
}

/** What every binary under test gets: registrations are not throttled (tests register many users from one address). */
const baseEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  REGISTRATION_THROTTLE: 'false',
})

/** Starts the binary and waits (bounded) until GET /health answers 200 `{"status": "ok"}` (not `starting`). */
export async function startServer(binary: string, options: StartOptions = {}): Promise<Server> {
  const dir = options.dir ?? installBinary(binary)
  const port = options.port === null ? 3000 : (options.port ?? freePort())
  const env = { ...(options.exactEnv ?? { ...baseEnv(), ...options.env }) }
  if (options.port !== null) env.PORT = String(port)
  const proc = Bun.spawn({
    cmd: [...(options.wrapper ?? []), join(dir, 'conduit'), ...(options.args ?? [])],
    cwd: dir,
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  processes.add(proc)
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)
  const url = `http://127.0.0.1:${port}`

  const server: Server = {
    proc,
    dir,
    port,
    url,
    stdout: () => out.text,
    stderr: () => err.text,
    async waitForStdout(check, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs
      while (!check(out.text)) {
        if (Date.now() > until) throw new Error(`stdout did not show what was expected within ${timeoutMs} ms:\n${out.text}`)
        await Bun.sleep(20)
      }
      return out.text
    },
    async stop(signal = 'SIGTERM', timeoutMs = STOP_TIMEOUT_MS) {
      const t0 = performance.now()
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
      let timedOut = false
      try {
        await withTimeout(proc.exited, timeoutMs, `exit after ${signal}`)
      } catch {
        timedOut = true
        proc.kill('SIGKILL')
        await withTimeout(proc.exited, 5_000, 'exit after SIGKILL').catch(() => {})
      }
      const ms = performance.now() - t0
      await withTimeout(Promise.all([out.done, err.done]), 2_000, 'output streams').catch(() => {})
      processes.delete(proc)
      return { code: proc.exitCode, signal: proc.signalCode, ms, timedOut }
    },
  }

  const until = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await withTimeout(Promise.all([out.done, err.done]), 2_000, 'output streams').catch(() => {})
      processes.delete(proc)
      throw new Error(
        `the server exited before answering /health (code ${proc.exitCode}, signal ${proc.signalCode})\nstdout:\n${out.text}\nstderr:\n${err.text}`,
      )
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) })
      // 200 {"status":"starting"} while the database is opened and migrated: not serving yet
      const body = await res.text()
      if (res.status === 200 && JSON.parse(body).status === 'ok') return server
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await server.stop('SIGKILL')
      throw new Error(`GET /health did not answer 200 "ok" within ${READY_TIMEOUT_MS} ms\nstdout:\n${out.text}\nstderr:\n${err.text}`)
    }
    await Bun.sleep(50)
  }
}

/**
 * Two instances of the binary on one database of the backend under test: two
 * processes on one SQLite file, or two instances on one PostgreSQL database.
 * `database` is what `--db` names (the file, or the URL).
 */
export async function twoInstances(binary: string, extraEnv: Record<string, string> = {}) {
  const db = await binaryDatabase()
  const file = join(tempDir(), 'shared.db')
  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...(onPostgres ? db.env : { DATABASE_PATH: file }), ...extraEnv }
  const a = await startServer(binary, { env })
  const b = await startServer(binary, { env })
  return { a, b, env, db, database: onPostgres ? db.env.DATABASE_URL! : file }
}

export interface CliResult {
  code: number | null
  signal: number | NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs the binary with `args` to completion (SIGKILL after `timeoutMs`); `stdin`: what it reads on standard input. */
export async function runCli(
  binary: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; stdin?: string } = {},
): Promise<CliResult> {
  const proc = Bun.spawn({
    cmd: [binary, ...args],
    cwd: options.cwd ?? tempDir(),
    env: { ...baseEnv(), ...options.env },
    stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  processes.add(proc)
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)
  const timeoutMs = options.timeoutMs ?? CLI_TIMEOUT_MS
  try {
    await withTimeout(proc.exited, timeoutMs, `conduit ${args.join(' ')}`)
  } catch (e) {
    proc.kill('SIGKILL')
    await withTimeout(proc.exited, 5_000, 'exit after SIGKILL').catch(() => {})
    throw new Error(`${(e as Error).message}\nstdout:\n${out.text}\nstderr:\n${err.text}`)
  } finally {
    processes.delete(proc)
  }
  await withTimeout(Promise.all([out.done, err.done]), 2_000, 'output streams').catch(() => {})
  return { code: proc.exitCode, signal: proc.signalCode, stdout: out.text, stderr: err.text }
}

/** Runs any command to completion (SIGKILL after `timeoutMs`). */
export async function run(cmd: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs: number }): Promise<CliResult> {
  const proc = Bun.spawn({ cmd, cwd: options.cwd, env: options.env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  processes.add(proc)
  const out = collect(proc.stdout)
  const err = collect(proc.stderr)
  try {
    await withTimeout(proc.exited, options.timeoutMs, cmd[0] ?? 'command')
  } catch (e) {
    proc.kill('SIGKILL')
    await withTimeout(proc.exited, 5_000, 'exit after SIGKILL').catch(() => {})
    throw new Error(`${(e as Error).message}\nstdout:\n${out.text.slice(-2000)}\nstderr:\n${err.text.slice(-2000)}`)
  } finally {
    processes.delete(proc)
  }
  await withTimeout(Promise.all([out.done, err.done]), 2_000, 'output streams').catch(() => {})
  return { code: proc.exitCode, signal: proc.signalCode, stdout: out.text, stderr: err.text }
}

// ---------------------------------------------------------------- files this process may not write

export const isRoot = process.getuid?.() === 0

/** Whether chattr +i holds on a file here: root ignores the mode bits, so only that attribute stops root writing. */
async function chattrWorks(): Promise<boolean> {
  const file = join(tempDir(), 'probe')
  writeFileSync(file, '')
  const set = await run(['chattr', '+i', file], { timeoutMs: 5_000 }).catch(() => undefined)
  if (set?.code !== 0) return false
  await run(['chattr', '-i', file], { timeoutMs: 5_000 })
  return true
}
let unwritable: Promise<string | false> | undefined
/** Why makeUnwritable cannot work here (skipIf's reason), or false: `const reason = await unwritableSkip()` at the top of a test file. */
export const unwritableSkip = () =>
  (unwritable ??= (async () => isRoot && !(await chattrWorks()) && 'as root without a working chattr +i')())

/** Makes a file or directory unwritable, for root too (chattr +i) or for anyone else (chmod); returns the undo. */
export async function makeUnwritable(path: string, kind: 'file' | 'directory'): Promise<() => Promise<void>> {
  if (!isRoot) {
    await run(['chmod', kind === 'file' ? '0444' : '0555', path], { timeoutMs: 5_000 })
    return async () => void (await run(['chmod', kind === 'file' ? '0644' : '0755', path], { timeoutMs: 5_000 }))
  }
  const set = await run(['chattr', '+i', path], { timeoutMs: 5_000 })
  if (set.code !== 0) throw new Error(`chattr +i ${path}: ${set.stderr}`)
  return async () => void (await run(['chattr', '-i', path], { timeoutMs: 5_000 }))
}

// ---------------------------------------------------------------- HTTP

export interface ApiResponse {
  status: number
  headers: Headers
  body: any
  text: string
}

/** The route declarations answers are checked against: those of an app built once in this process (the binary is built from the same code). */
let declared: Promise<readonly Route[]> | undefined
export const declarations = () =>
  (declared ??= (async () => {
    const db = openDatabase(':memory:')
    migrate(db)
    return (await createApp({ store: sqliteStore(db, ':memory:'), config: testConfig() })).declared
  })())

/** One JSON request to the server (bounded); the answer is checked against its route's declaration (test/support/contract.ts). */
export async function api(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; timeoutMs?: number } & ContractOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {}
  if (options.token) headers.authorization = `Token ${options.token}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  })
  const text = await res.text()
  checkAnswer(await declarations(), method, `${base}${path}`, res.status, text, options)
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = null
  }
  return { status: res.status, headers: res.headers, body, text }
}

/**
 * A read anyone may make, sent with a token the server must not take: exactly the answer anyone
 * gets, saying in `WWW-Authenticate` that the token is unusable.
 */
export async function expectReadAsAnyone(base: string, path: string, token: string): Promise<void> {
  const anyone = await api(base, 'GET', path)
  const read = await api(base, 'GET', path, { token })
  expect({ path, status: read.status, body: read.body, challenge: read.headers.get('www-authenticate') }).toEqual({
    path,
    status: anyone.status,
    body: anyone.body,
    challenge: 'Token error="invalid_token"',
  })
}

let counter = 0
/** A name no other call in this process has produced. */
export const unique = (prefix = 'u') => `${prefix}${++counter}${Math.random().toString(36).slice(2, 8)}`

export interface User {
  username: string
  email: string
  password: string
  token: string
}

export function newCredentials(prefix = 'u'): Omit<User, 'token'> {
  const username = unique(prefix)
  return { username, email: `${username}@example.com`, password: `pw-${unique('secret')}-long` }
}

/** Registers a user; throws (with the response) unless 201. */
export async function register(base: string, credentials = newCredentials()): Promise<User> {
  const res = await api(base, 'POST', '/api/users', { body: { user: credentials } })
  if (res.status !== 201) throw new Error(`register ${credentials.username}: ${res.status} ${res.text}`)
  return { ...credentials, token: res.body.user.token }
}
