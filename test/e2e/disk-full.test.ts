import { expect, test } from 'bun:test'
import { unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { skipIf, why } from '../support/skip.ts'
import { mountTmpfs, tmpfsReason } from '../support/tmpfs.ts'
import { api, register, startServer, useBinary } from './support.ts'

/**
 * The binary on a SQLite file whose disk fills up (a 2 MiB tmpfs, filled by
 * a file of zeros): writes answer 503 with Retry-After, each logged as one
 * line with SQLite's reason; the background checkpointer says it fails once,
 * not at every tick; a stop on the full disk is one line and exit 0; a start
 * on it serves what is there; freeing the space brings writes back.
 */
const binary = useBinary()
const UNAVAILABLE = { errors: { database: ['is unavailable; try again shortly'] } }
const FULL = 'reason="database or disk is full (SQLITE_FULL)"'
const article = (i: number) => ({ article: { title: `Full ${i}`, description: 'd', body: 'x'.repeat(60_000) } })
const count = (text: string, what: string) => text.split(what).length - 1

skipIf(why.sqliteOnly || tmpfsReason()).describe('SQLite on a full disk', () => {
  test('writes answer 503 with one log line each; the checkpointer logs a change of state once; stop and start work; freeing space recovers', async () => {
    const disk = mountTmpfs(2 * 1024 * 1024)
    try {
      const env = { HOST: '127.0.0.1', DATABASE_PATH: join(disk.dir, 'c.db') }
      const a = await startServer(binary(), { env })
      const user = await register(a.url)
      const filler = disk.fill()
      // what is left of the WAL's room takes a few articles; then SQLite needs a page the disk does not have
      let full: Awaited<ReturnType<typeof api>> | undefined
      let created = 0
      for (let i = 0; i < 60 && !full; i++) {
        const res = await api(a.url, 'POST', '/api/articles', { token: user.token, body: article(i) })
        if (res.status === 201) created++
        else full = res
      }
      expect(full && { status: full.status, body: full.body, retry: full.headers.get('retry-after') }).toEqual({
        status: 503,
        body: UNAVAILABLE,
        retry: '2',
      })
      // a login counts its attempt in the database (the throttle): never a 500. (Its few pages may still fit
      // where the article's did not, in the WAL the failed write grew: then it succeeds.)
      const login = await api(a.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
      expect(login.status === 200 || (login.status === 503 && Bun.deepEquals(login.body, UNAVAILABLE))).toBe(true)
      // reads go on
      expect((await api(a.url, 'GET', '/api/articles?limit=1')).status).toBe(200)
      // idle for a while: the checkpointer (every 200 ms) keeps failing, and says so once
      await Bun.sleep(1_500)
      const log = a.stdout()
      expect(log).toContain(`WARN database unavailable method=POST path=/api/articles ${FULL}`)
      if (login.status === 503) expect(log).toContain(`WARN database unavailable method=POST path=/api/users/login ${FULL}`)
      expect(count(log, 'background checkpoint failed')).toBe(1)
      expect(log).not.toContain('unhandled error')

      // a stop on the full disk: its last checkpoint cannot be made; one line, exit 0, nothing lost
      const stopped = await a.stop()
      expect(stopped).toMatchObject({ code: 0, timedOut: false })
      const end = a.stdout().slice(log.length)
      expect(end).toContain(`WARN database closed without its final checkpoint`)
      expect(end).toContain(FULL)
      expect(end).toContain('INFO stopped')
      expect(`${a.stdout()}${a.stderr()}`).not.toMatch(/^\s+at /m)
      expect(a.stderr()).toBe('')

      // a start on the full disk serves everything that was acknowledged (none, when the first article did not fit)
      const b = await startServer(binary(), { env })
      const before = (await api(b.url, 'GET', '/api/articles?limit=1')).body.articlesCount
      expect(before).toBe(created)
      await b.waitForStdout((out) => out.includes('background checkpoint failed'))
      unlinkSync(filler)
      // space freed: writes are back, and so are the checkpoints, each said once
      const res = await api(b.url, 'POST', '/api/articles', { token: user.token, body: article(1000) })
      expect(res.status).toBe(201)
      expect((await api(b.url, 'GET', '/api/articles?limit=1')).body.articlesCount).toBe(before + 1)
      await b.waitForStdout((out) => out.includes('INFO background checkpoint works again'))
      await Bun.sleep(500)
      expect(count(b.stdout(), 'background checkpoint failed')).toBe(1)
      expect(count(b.stdout(), 'background checkpoint works again')).toBe(1)
      expect(await b.stop()).toMatchObject({ code: 0, timedOut: false })
      expect(b.stdout()).not.toContain('without its final checkpoint')
    } finally {
      disk.unmount()
    }
  }, 60_000)
})
