#!/usr/bin/env bun
/**
 * `bun run test`: the whole suite, twice — on SQLite and on PostgreSQL, the
 * two passes at once (each runs its files one after another, so two cores
 * finish both in little more than the longer one); the PostgreSQL pass's
 * output is held and printed when the SQLite pass has ended; two of its files
 * run in a second process once the SQLite pass has ended (see LATE).
 * `--serial` runs one pass after the other, each whole.
 *
 * The PostgreSQL pass uses TEST_DATABASE_URL (a server where the tests may
 * create and drop databases), else a server on 127.0.0.1:5432 as user
 * postgres when one answers. Without one, the pass is skipped with one line
 * saying how to run it. Extra arguments go to `bun test` (a file, -t ...).
 * Each pass's line in the summary counts its skipped tests by reason (the
 * `[skipped: reason]` test/support/skip.ts puts in their names); a skipped
 * test that gives none fails the run. Ends with the totals as ` N pass` /
 * ` N fail` lines and exits non-zero when either pass failed.
 */
import { SQL } from 'bun'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { skipsByReason, unexplainedSkips } from './skips.ts'

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres'
const serial = process.argv.includes('--serial')
const args = process.argv.slice(2).filter((a) => a !== '--serial')

async function reachable(url: string): Promise<boolean> {
  const sql = new SQL({ url, max: 1, connectionTimeout: 3 })
  try {
    await sql`SELECT 1`
    return true
  } catch {
    return false
  } finally {
    await sql.close({ timeout: 1 }).catch(() => {})
  }
}

/**
 * Runs one pass, its output passed through once `shown` resolves (held until
 * then); returns its pass and fail counts and its skips by reason.
 */
async function pass(
  label: string,
  env: Record<string, string | undefined>,
  shown: Promise<unknown> = Promise.resolve(),
  files: string[] = [],
  start: Promise<unknown> = Promise.resolve(),
) {
  await start
  let live = false
  let held: [NodeJS.WriteStream, string][] = [[process.stdout, `\n=== ${label}\n`]]
  const write = (out: NodeJS.WriteStream, s: string) => (live ? out.write(s) : held.push([out, s]))
  void shown.then(() => {
    for (const [out, s] of held) out.write(s)
    held = []
    live = true
  })
  const proc = Bun.spawn({
    cmd: [process.execPath, 'test', ...args, ...files],
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let text = ''
  const copy = async (stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const s = decoder.decode(chunk, { stream: true })
      text += s
      write(out, s)
    }
  }
  await Promise.all([copy(proc.stdout, process.stdout), copy(proc.stderr, process.stderr)])
  const code = await proc.exited
  await shown
  const last = (re: RegExp) => Number([...text.matchAll(re)].at(-1)?.[1] ?? 0)
  return { label, code, pass: last(/^ *(\d+) pass$/gm), fail: last(/^ *(\d+) fail$/gm), skips: skipsByReason(text), output: text }
}

// the compiled binary, built once for the end-to-end tests of both passes
let binary = process.env.CONDUIT_E2E_BINARY
if (!binary) {
  console.log('=== bun run build (the binary the end-to-end tests run)')
  const build = Bun.spawnSync({ cmd: [process.execPath, 'run', 'build'], stdout: 'inherit', stderr: 'inherit' })
  if (build.exitCode !== 0) {
    console.log(' 0 pass\n 1 fail')
    process.exit(1)
  }
  binary = resolve('dist/conduit')
}

/**
 * Files of the PostgreSQL pass it runs in a second process of its own once the
 * SQLite pass has ended: the PostgreSQL pass took half again as long, and ran
 * alone on two cores for its last minutes. Long files that run in process
 * (no binary, no timing of their own), so they take what the SQLite pass
 * leaves, never a third process at once (which made timed tests fail).
 */
const LATE = ['./test/robustness/fuzz.test.ts', './test/users/users.test.ts'].filter((f) => existsSync(f))

const url = process.env.TEST_DATABASE_URL || DEFAULT_URL
const postgres = await reachable(url)
const sqlite = pass('SQLite', { TEST_DATABASE_URL: '', CONDUIT_E2E_BINARY: binary })
if (serial) await sqlite
const pgLabel = `PostgreSQL (${url.replace(/:[^:@/]*@/, ':***@')})`
const pgEnv = { TEST_DATABASE_URL: url, CONDUIT_E2E_BINARY: binary }
let results: Awaited<ReturnType<typeof pass>>[]
if (!postgres) results = [await sqlite]
else if (args.length || serial || !LATE.length) results = await Promise.all([sqlite, pass(pgLabel, pgEnv, sqlite)])
else {
  const early = [...new Bun.Glob('test/**/*.test.ts').scanSync()]
    .map((f) => `./${f}`)
    .filter((f) => !LATE.includes(f))
    .sort()
  const first = pass(pgLabel, pgEnv, sqlite, early)
  results = await Promise.all([sqlite, first, pass(`${pgLabel}, its last files`, pgEnv, first, LATE, sqlite)])
}
if (!postgres) {
  console.log(
    `\n=== PostgreSQL pass skipped: no server answered at ${url.replace(/:[^:@/]*@/, ':***@')}; ` +
      'run it with TEST_DATABASE_URL=postgres://user:password@host:port/database bun run test',
  )
}

console.log('\n=== totals')
for (const r of results) {
  const skipped = [...r.skips.values()].reduce((n, k) => n + k, 0)
  const why = [...r.skips].map(([reason, n]) => `${n} ${reason}`).join(', ')
  console.log(
    `${r.label}: ${r.pass} pass, ${r.fail} fail, ${skipped} skipped${skipped ? `: ${why}` : ''}${r.code ? ` (exit ${r.code})` : ''}`,
  )
}
// every skip says why (test/support/skip.ts): one that does not is a failure of the run
const unexplained = results.flatMap((r) => unexplainedSkips(r.output).map((l) => `${r.label}: ${l}`))
for (const line of new Set(unexplained)) console.log(`skipped without a reason (use test/support/skip.ts): ${line}`)
console.log(` ${results.reduce((n, r) => n + r.pass, 0)} pass`)
console.log(` ${results.reduce((n, r) => n + r.fail, 0)} fail`)
process.exit(results.some((r) => r.code !== 0) || unexplained.length ? 1 : 0)
