import { afterAll, afterEach, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { cleanup, freePort, tempDir } from '../e2e/support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * Installing the dependencies phones nobody. swagger-ui-dist depends on
 * @scarf/scarf, whose postinstall reports every install to scarf.sh and
 * leaves $TMPDIR/scarf-js-history-<user>.log behind; Bun runs it (it is on
 * Bun's default list of trusted packages). package.json turns it off twice:
 * `trustedDependencies: []` (Bun runs no dependency's install script) and
 * `scarfSettings.enabled: false` (what the script itself honours, for npm or
 * pnpm). CI checks a real install too (.ci/run).
 */
const ROOT = join(import.meta.dir, '../..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const REPORT = join(ROOT, 'node_modules/@scarf/scarf/report.js')
const npm = Bun.which('npm')

let stopListener = () => {}
afterEach(() => stopListener())
// the temp directories tempDir() made
afterAll(cleanup)

/**
 * Runs Scarf's postinstall as an install in `root` would, its reports sent to
 * a listener here (SCARF_LOCAL_PORT) instead of scarf.sh; returns what reached
 * it and the history files the script left in its temp directory.
 */
async function runScarf(root: string): Promise<{ reports: string[]; left: string[] }> {
  const reports: string[] = []
  const listener = Bun.serve({
    hostname: 'localhost',
    port: 0,
    fetch(req) {
      reports.push(`${req.method} ${new URL(req.url).pathname}`)
      return new Response('ok')
    },
  })
  stopListener = () => listener.stop(true)
  const tmp = tempDir('conduit-scarf-')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    TMPDIR: tmp,
    INIT_CWD: root,
    SCARF_LOCAL_PORT: String(listener.port),
  }
  const proc = Bun.spawn({ cmd: [process.execPath, REPORT], cwd: join(REPORT, '..'), env, stdout: 'ignore', stderr: 'ignore' })
  await proc.exited
  return { reports, left: readdirSync(tmp).filter((f) => f.startsWith('scarf-js-history-')) }
}

skipIf(why.sqlitePass).describe('installing the dependencies', () => {
  test('package.json runs no dependency install script and turns Scarf off; bun.lock agrees', () => {
    expect(pkg.trustedDependencies).toEqual([])
    expect(pkg.scarfSettings).toEqual({ enabled: false })
    // a lock file without the list would bring Bun's default list back on the next install
    expect(readFileSync(join(ROOT, 'bun.lock'), 'utf8')).toContain('"trustedDependencies": []')
  })

  skipIf(!npm && "npm missing (Scarf's script asks `npm ls` for the project's settings)").test(
    "Scarf's own postinstall, run for this project, reports nothing and leaves nothing behind (but does for a project without scarfSettings)",
    async () => {
      expect(await runScarf(ROOT)).toEqual({ reports: [], left: [] })
      // a project that depends on swagger-ui-dist without the setting: the script reports (to the listener), so the check above can fail
      const other = tempDir('conduit-scarf-root-')
      writeFileSync(
        join(other, 'package.json'),
        JSON.stringify({ name: 'other', version: '1.0.0', dependencies: { 'swagger-ui-dist': '*' } }),
      )
      for (const dep of ['swagger-ui-dist', '@scarf/scarf']) {
        mkdirSync(join(other, 'node_modules', dep), { recursive: true })
        copyFileSync(join(ROOT, 'node_modules', dep, 'package.json'), join(other, 'node_modules', dep, 'package.json'))
      }
      const control = await runScarf(other)
      expect(control.reports).toEqual(['POST /package-event/install'])
      expect(control.left).toHaveLength(1)
    },
    30_000,
  )
})

/**
 * The README's first command exactly as written, in a copy of the repository
 * with nothing installed, for whoever runs the suite (CI: a user who is not
 * root) with a home directory of its own: Bun from npm into ~/.local, the
 * dependencies, then the service from source on the embedded database. Its
 * address is the only thing changed (PORT and HOST, which it reads). CI runs
 * the second command as written too (.ci/run).
 */
skipIf(why.sqlitePass || (!npm && 'npm missing')).describe("the README's first command", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const quick = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Quick start')))?.[1] ?? ''
  const [serve] = quick.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'))

  test('installs Bun and the dependencies as this user, and serves the API, the docs and a new ./conduit.db', async () => {
    expect(serve).toEndWith('bun run start')
    const dir = tempDir('conduit-readme-')
    const home = join(dir, 'home')
    const app = join(dir, 'conduit')
    mkdirSync(home)
    mkdirSync(app)
    // the files of the repository as they are (what a clone of them would hold), none of what an install adds
    const files = Bun.spawnSync({ cmd: ['git', 'ls-files', '-z'], cwd: ROOT, stdout: 'pipe' })
      .stdout.toString()
      .split('\0')
    for (const f of files.filter(Boolean)) {
      if (!existsSync(join(ROOT, f))) continue
      mkdirSync(dirname(join(app, f)), { recursive: true })
      copyFileSync(join(ROOT, f), join(app, f))
    }
    const port = freePort()
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    }
    // a site's CA bundle for Node (npm), when the environment names one
    if (process.env.NODE_EXTRA_CA_CERTS) env.NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS
    // its own session: the shell, bun run and the server go together at the end
    const proc = Bun.spawn({ cmd: ['setsid', 'bash', '-c', serve!], cwd: app, env, stdout: 'pipe', stderr: 'pipe' })
    const out = new Response(proc.stdout).text()
    const err = new Response(proc.stderr).text()
    try {
      let tags: Response | undefined
      const until = Date.now() + 240_000
      while (!tags && Date.now() < until && proc.exitCode === null) {
        tags = await fetch(`http://127.0.0.1:${port}/api/tags`).catch(() => undefined)
        if (!tags) await Bun.sleep(250)
      }
      if (!tags) throw new Error(`the first command did not serve (exit ${proc.exitCode})\n${await out}\n${await err}`)
      expect({ status: tags.status, body: await tags.json() }).toEqual({ status: 200, body: { tags: [] } })
      const swagger = await fetch(`http://127.0.0.1:${port}/swagger`)
      expect(swagger.status).toBe(200)
      expect(await swagger.text()).toContain('swagger-ui')
      expect(existsSync(join(app, 'conduit.db'))).toBe(true)
      expect(existsSync(join(home, '.local/bin/bun'))).toBe(true)
    } finally {
      try {
        process.kill(-proc.pid, 'SIGTERM')
      } catch {}
      await proc.exited
    }
  }, 300_000)
})
