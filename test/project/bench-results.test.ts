import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { resultsJson } from '../../bench/report.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * bench/results keeps the latest run of each benchmark, and its README lists
 * them: every file there is in the table once, and each row's start, commit
 * and machine are those the JSON recorded (a table copied from an older run
 * fails here). Each file is in the form `bun run bench` writes, which keeps
 * them small: a file written another way, or with the warm-up runs, fails.
 */
const ROOT = join(import.meta.dir, '../..')
const DIR = 'bench/results'

const tracked = Bun.spawnSync(['git', 'ls-files', DIR], { cwd: ROOT, stdout: 'pipe' })
  .stdout.toString()
  .split('\n')
  .filter(Boolean)
  .map((f) => f.slice(DIR.length + 1))

interface Row {
  files: string[]
  started: string
  commit: string
  machine: string
}
const rows: Row[] = readFileSync(join(ROOT, DIR, 'README.md'), 'utf8')
  .split('\n')
  .filter((l) => /^\| (latest|\d{4}-)/.test(l))
  .map((l) => {
    const [files, , started, commit, machine] = l
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim())
    return { files: files!.split(/,\s*/), started: started!, commit: commit!, machine: machine! }
  })

skipIf(why.sqlitePass).describe('bench/results', () => {
  test('its README lists every file kept there, once, and nothing else', () => {
    expect(rows.flatMap((r) => r.files).sort()).toEqual(tracked.filter((f) => f !== 'README.md').sort())
  })

  test('each file is as bun run bench writes it: one line per field, no warm-up runs', () => {
    for (const file of tracked.filter((f) => f.endsWith('.json'))) {
      const text = readFileSync(join(ROOT, DIR, file), 'utf8')
      const run = JSON.parse(text)
      expect({ file, text }).toEqual({ file, text: resultsJson(run) })
      const warmups = run.sizes.flatMap((s: { endpoints: object[] }) =>
        s.endpoints.filter((e) => 'serverWarmup' in e || 'boundWarmup' in e),
      )
      expect({ file, warmups: warmups.length }).toEqual({ file, warmups: 0 })
    }
  })

  test("each row's start, commit and machine are the run's own", () => {
    for (const row of rows) {
      const json = row.files.find((f) => f.endsWith('.json'))!
      const run = JSON.parse(readFileSync(join(ROOT, DIR, json), 'utf8'))
      const cpu = String(run.machine.cpu)
        .replace(/\(R\)/g, '')
        .replace(/ Processor$/, '')
      expect({ json, ...row, files: undefined }).toEqual({
        json,
        files: undefined,
        started: run.startedAt.slice(0, 16).replace('T', ' '),
        commit: `${run.machine.commit.slice(0, 7)}${run.machine.dirty ? ' (+ changes)' : ''}`,
        machine: cpu,
      })
    }
  })
})
