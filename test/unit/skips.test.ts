import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { NO_REASON, skipsByReason, unexplainedSkips } from '../../scripts/skips.ts'
import { skipIf, why } from '../support/skip.ts'

const SKIP_HELPER = resolve(import.meta.dir, '../support/skip.ts')

/** bun test's whole output (stdout and stderr) for one test file written from `source`. */
function bunTest(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'conduit-skips-'))
  try {
    writeFileSync(join(dir, 'fixture.test.ts'), source)
    const r = Bun.spawnSync({
      cmd: [process.execPath, 'test', './fixture.test.ts'],
      cwd: dir,
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, TEST_DATABASE_URL: '' },
    })
    return r.stdout.toString() + r.stderr.toString()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const fixture = (passing: number) => `
import { test } from 'bun:test'
import { skipIf } from ${JSON.stringify(SKIP_HELPER)}
for (let i = 0; i < ${passing}; i++) test('runs ' + i, () => {})
skipIf('haproxy missing').describe('a group', () => {
  test('one', () => {})
  test('two', () => {})
})
skipIf(false).test('not skipped', () => {})
skipIf('needs root').test('alone', () => {})
skipIf('haproxy missing').describeEach([[1], [2]], 'each %i', () => { test('inner', () => {}) })
test.skip('bare', () => {})
`

skipIf(why.sqlitePass).describe('skipped tests say why, and the summary counts them by reason', () => {
  // bun test repeats the skips in a recap when a run is long: each is counted once either way
  test.each([
    ['a short run', 3],
    ['a long run, with the recap', 40],
  ])(
    '%s',
    (_, passing) => {
      const output = bunTest(fixture(passing))
      expect(output).toContain(`${passing + 1} pass`)
      expect(output).toContain('(skip) a group [skipped: haproxy missing] > one')
      expect(Object.fromEntries(skipsByReason(output))).toEqual({ 'haproxy missing': 4, 'needs root': 1, [NO_REASON]: 1 })
      expect(unexplainedSkips(output)).toEqual(['(skip) bare'])
    },
    30_000,
  )
})
