import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chownSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { skipIf, why } from '../support/skip.ts'
import { isRoot, makeUnwritable, register, runCli, startServer, tempDir, unwritableSkip, useBinary } from './support.ts'

/**
 * The files the binary keeps beside a SQLite database: who may read them,
 * and what it says when one it shares with other processes cannot be used.
 */
const binary = useBinary()
const unwritable = await unwritableSkip()
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)

skipIf(why.sqliteOnly).describe('the SQLite files', () => {
  test('a new database, its -wal and -shm, and a backup are readable by their owner only (they hold the signing secret)', async () => {
    const cwd = tempDir()
    const db = join(cwd, 'c.db')
    expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
    expect(mode(db)).toBe('600')
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
    try {
      await register(server.url)
      expect([mode(db), mode(`${db}-wal`), mode(`${db}-shm`), mode(`${db}-changes`)]).toEqual(['600', '600', '600', '600'])
      const backup = join(cwd, 'b.db')
      expect((await runCli(binary(), ['backup', backup, '--db', db], { cwd })).code).toBe(0)
      expect(mode(backup)).toBe('600')
    } finally {
      await server.stop()
    }
    // a database made by serve itself, too
    const other = join(tempDir(), 'new.db')
    const fresh = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: other } })
    expect(mode(other)).toBe('600')
    await fresh.stop()
  }, 60_000)

  test('a write lock held by another process past busy_timeout: 503 with Retry-After, nothing written; then served', async () => {
    const db = join(tempDir(), 'c.db')
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
    const other = new Database(db)
    try {
      const user = await register(server.url)
      other.run('BEGIN IMMEDIATE')
      const post = (title: string) =>
        fetch(`${server.url}/api/articles`, {
          method: 'POST',
          headers: { authorization: `Token ${user.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ article: { title, description: 'd', body: 'b' } }),
          signal: AbortSignal.timeout(20_000),
        })
      const refused = await post('while locked')
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '2'])
      expect(await refused.json()).toEqual({ errors: { database: ['is unavailable; try again shortly'] } })
      other.run('ROLLBACK')
      expect((await post('after the lock')).status).toBe(201)
      expect(other.query("SELECT count(*) AS n FROM articles WHERE title = 'while locked'").get()).toEqual({ n: 0 })
      expect(server.stdout()).toContain('database is locked')
    } finally {
      other.close()
      await server.stop()
    }
  }, 60_000)

  skipIf(unwritable).test(
    'a change signal file the server cannot open: it serves, and says once why it is slower and how to fix it',
    async () => {
      const cwd = tempDir()
      const db = join(cwd, 'c.db')
      expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
      // as one made by root (a command run as root before the service wrote) is for the service's user
      writeFileSync(`${db}-changes`, new Uint8Array(4096))
      const restore = await makeUnwritable(`${db}-changes`, 'file')
      try {
        const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
        const user = await register(server.url)
        expect(user.token).toBeTruthy()
        await server.stop()
        const warnings = server
          .stdout()
          .split('\n')
          .filter((l) => l.includes(' WARN '))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain(
          `WARN cannot use the change signal ${db}-changes, so every request asks SQLite what changed (slower): give the file to the service's user (chown) or remove it while no process uses the database reason=`,
        )
      } finally {
        await restore()
      }
    },
    30_000,
  )

  skipIf(!isRoot && 'needs root: a command run as root on a database another user owns').test(
    "a command run as root on another user's database makes the change signal that user's, as SQLite makes its -wal and -shm",
    async () => {
      const cwd = tempDir()
      const db = join(cwd, 'c.db')
      expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
      chownSync(db, 65534, 65534)
      const seed = await runCli(binary(), ['seed', '--db', db, '--users', '2', '--articles', '2'], { cwd })
      expect(seed.code).toBe(0)
      const signal = statSync(`${db}-changes`)
      expect({ uid: signal.uid, gid: signal.gid, mode: mode(`${db}-changes`) }).toEqual({ uid: 65534, gid: 65534, mode: '600' })
    },
    30_000,
  )
})
