#!/usr/bin/env bun
/**
 * Runs RealWorld's end-to-end suite for frontends (Playwright) against a served app.
 *
 *   bun scripts/e2e.ts --suite DIR --mode fullstack|ssr [--grep TEXT] [--exclude TITLE ...] [--workers N]
 *
 * Meant to run under scripts/against.ts, which serves the binary and sets HOST (the site) and
 * APIURL (its /api). The suite is copied to a scratch folder inside this checkout (its specs
 * import @playwright/test, found in this project's node_modules), with a configuration of ours:
 * Debian's Chromium (`CHROMIUM`, default /usr/bin/chromium; nothing downloads a browser), one
 * retry, 60 s per test, and for `ssr` the suite's assumed demo user (`johndoe`, with an article) registered
 * through the API first. Prints the suite's own report, then `e2e <mode>: N passed, M failed,
 * K skipped, F flaky` and the plain last line `N passed, M failed` (a flaky test, which passed
 * on its retry, counts as passed and is named). Exits non-zero when any test failed.
 *
 * `--exclude TITLE` leaves out the tests whose title contains TITLE, each named in the output:
 * for a test of the suite that cannot pass anywhere but on the Internet (say why where it is
 * used).
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    suite: { type: 'string' },
    mode: { type: 'string', default: 'fullstack' },
    grep: { type: 'string' },
    exclude: { type: 'string', multiple: true, default: [] },
    workers: { type: 'string', default: '1' },
  },
  strict: true,
})
const ROOT = resolve(import.meta.dir, '..')
const site = process.env.HOST
const api = process.env.APIURL
if (!args.suite || !site || !api) {
  console.error(
    'usage: HOST=http://... APIURL=http://.../api bun scripts/e2e.ts --suite DIR --mode fullstack|ssr (scripts/against.ts sets both)',
  )
  process.exit(2)
}
if (args.mode !== 'fullstack' && args.mode !== 'ssr') throw new Error('--mode must be fullstack or ssr')

const work = join(ROOT, '.tmp', `e2e-${process.pid}`)
mkdirSync(work, { recursive: true })
cpSync(resolve(args.suite), join(work, 'e2e'), { recursive: true })
const results = join(work, 'results.json')
writeFileSync(
  join(work, 'playwright.config.ts'),
  `import { defineConfig, devices } from '@playwright/test'
import { baseConfig } from './e2e/playwright.base'
export default defineConfig({
  ...baseConfig,
  testDir: './e2e',
  outputDir: './test-results',
  retries: 1,
  // the suite's 15 s per test, four times: its pagination tests write 12 articles through the form
  // (8-13 s alone on two cores, by the day), and CI runs three of these suites at once: on a slow
  // day two of them passed 30 s
  timeout: 60_000,
  reporter: [['list'], ['json', { outputFile: ${JSON.stringify(results)} }]],
  ${args.mode === 'ssr' ? "globalSetup: './setup.ts'," : ''}
  use: { ...baseConfig.use, baseURL: ${JSON.stringify(site)}, trace: 'off', screenshot: 'off' },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: {
          executablePath: ${JSON.stringify(process.env.CHROMIUM ?? '/usr/bin/chromium')},
          args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        },
      },
    },
  ],
})
`,
)
// ssr: the suite assumes RealWorld's demo backend, whose `johndoe` has articles (its README)
writeFileSync(
  join(work, 'setup.ts'),
  `export default async function setup() {
  const api = ${JSON.stringify(api)}
  const user = { username: 'johndoe', email: 'johndoe@example.com', password: 'johndoe-password' }
  const post = (path: string, body: unknown, token?: string) =>
    fetch(api + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: 'Token ' + token } : {}) }, body: JSON.stringify(body) })
  let res = await post('/users', { user })
  if (res.status !== 201) res = await post('/users/login', { user })
  if (!res.ok) throw new Error('could not register or log in johndoe: ' + res.status)
  const { user: { token } } = await res.json()
  const article = await post('/articles', { article: { title: 'Welcome from johndoe', description: 'The demo user of the suite', body: 'Hello.', tagList: ['welcome'] } }, token)
  if (!article.ok) throw new Error('could not create johndoe\\'s article: ' + article.status)
}
`,
)

const cmd = ['node', join(ROOT, 'node_modules/@playwright/test/cli.js'), 'test', '--config', join(work, 'playwright.config.ts')]
// (--workers N: N spec files at once; the suite names its users and articles by Date.now(), so two workers may meet on one name: that test fails once and passes on its retry)
cmd.push('--workers', String(Number(args.workers) || 1))
if (args.grep) cmd.push('--grep', args.grep)
if (args.exclude.length > 0) cmd.push('--grep-invert', args.exclude.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'))
const run = Bun.spawn({
  cmd,
  cwd: work,
  env: { ...process.env, TEST_MODE: args.mode, API_BASE: api, CI: '', FORCE_COLOR: '0' },
  stdout: 'inherit',
  stderr: 'inherit',
})
const code = await run.exited

interface Spec {
  title: string
  file: string
  tests: { status: string }[]
}
interface Suite {
  specs?: Spec[]
  suites?: Suite[]
}
let passed = 0
let failed = 0
let skipped = 0
const flaky: string[] = []
try {
  const report = JSON.parse(readFileSync(results, 'utf8')) as { suites: Suite[] }
  const walk = (s: Suite) => {
    for (const spec of s.specs ?? [])
      for (const t of spec.tests) {
        if (t.status === 'skipped') skipped++
        else if (t.status === 'expected') passed++
        else if (t.status === 'flaky') {
          passed++
          flaky.push(`${spec.file}: ${spec.title}`)
        } else failed++
      }
    for (const child of s.suites ?? []) walk(child)
  }
  for (const s of report.suites) walk(s)
} catch (e) {
  console.log(`e2e: no report (${String(e)})`)
  failed++
}
rmSync(work, { recursive: true, force: true })
for (const f of flaky) console.log(`FLAKY (passed on its retry) ${f}`)
for (const t of args.exclude) console.log(`EXCLUDED (not run) tests titled ${JSON.stringify(t)}`)
console.log(`e2e ${args.mode}: ${passed} passed, ${failed} failed, ${skipped} skipped, ${flaky.length} flaky`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || code !== 0 || passed === 0 ? 1 : 0)
