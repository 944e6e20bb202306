import { afterAll, afterEach, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanup, tempDir } from './e2e/support.ts'
import { skipIf, why } from './support/skip.ts'

/**
 * Installing the dependencies phones nobody. swagger-ui-dist depends on
 * @scarf/scarf, whose postinstall reports every install to scarf.sh and
 * leaves $TMPDIR/scarf-js-history-<user>.log behind; Bun runs it (it is on
 * Bun's default list of trusted packages). package.json turns it off twice:
 * `trustedDependencies: []` (Bun runs no dependency's install script) and
 * `scarfSettings.enabled: false` (what the script itself honours, for npm or
 * pnpm). CI checks a real install too (.ci/run).
 */
const ROOT = join(import.meta.dir, '..')
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
