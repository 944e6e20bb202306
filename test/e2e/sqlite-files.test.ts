import { expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { skipIf, why } from '../support/skip.ts'
import { register, runCli, startServer, tempDir, useBinary } from './support.ts'

/** The files the binary keeps beside a SQLite database: who may read them. */
const binary = useBinary()
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
})
