import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { skipIf, why } from '../support/skip.ts'
import { ROOT, run, runCli, startServer, useBinary } from './support.ts'

/**
 * What a newcomer does after the Quick start, against the binary: the
 * README's Example as written, twice in a row (CI runs it against the
 * README's own first command too, .ci/run), and a clone that stays clean
 * when the binary runs in it.
 */

const binary = useBinary()
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const example = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('\n## Example\n')))?.[1] ?? ''
const curl = Bun.which('curl')

skipIf(why.sqlitePass || (!curl && 'curl missing')).describe("the README's Example", () => {
  test('runs twice in a row: one JSON a line, no error and no stack, the second time by logging in', async () => {
    expect(example).toContain('http://localhost:3000/api')
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1' } })
    try {
      // its address is the only thing changed
      const script = example.replaceAll('http://localhost:3000', server.url)
      for (const time of [1, 2]) {
        const r = await run(['bash', '-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 20_000 })
        expect({ time, code: r.code, stderr: r.stderr }).toEqual({ time, code: 0, stderr: '' })
        const lines = r.stdout.trimEnd().split('\n')
        expect({ time, lines: lines.length }).toEqual({ time, lines: 2 })
        const [created, listed] = lines.map((l) => JSON.parse(l))
        expect({ time, author: created.article?.author?.username }).toEqual({ time, author: 'jake' })
        expect({ time, count: listed.articlesCount }).toEqual({ time, count: time })
      }
    } finally {
      await server.stop()
    }
  }, 60_000)
})

skipIf(why.sqlitePass).describe('a clone where the binary ran', () => {
  test('git ignores every file the binary writes beside itself: itself, its database and what is kept beside it, a backup', async () => {
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1' } })
    const seen = new Set<string>()
    try {
      // a write, so that SQLite's -wal and -shm and the change signal all exist
      const registered = await fetch(`${server.url}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user: { username: 'clean', email: 'clean@example.com', password: 'cleancleanclean' } }),
      })
      expect(registered.status).toBe(201)
      expect((await runCli(join(server.dir, 'conduit'), ['backup', 'backup.db'], { cwd: server.dir })).code).toBe(0)
      for (const f of readdirSync(server.dir)) seen.add(f)
    } finally {
      expect((await server.stop()).code).toBe(0)
    }
    for (const f of readdirSync(server.dir)) seen.add(f)
    expect([...seen].sort()).toEqual(['backup.db', 'conduit', 'conduit.db', 'conduit.db-changes', 'conduit.db-shm', 'conduit.db-wal'])
    // as if at the top of the clone: `git check-ignore` exits 1 for a file git would list
    const check = await run(['git', 'check-ignore', '--no-index', '--verbose', '--non-matching', ...seen], { cwd: ROOT, timeoutMs: 10_000 })
    const unignored = check.stdout.split('\n').filter((l) => l.startsWith('::'))
    expect(unignored).toEqual([])
    expect(check.code).toBe(0)
  }, 60_000)
})
