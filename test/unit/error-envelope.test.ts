import { Database } from 'bun:sqlite'
import { expect, setSystemTime, test } from 'bun:test'
import { errorAnswer } from '../../src/http/error-envelope.ts'
import { createLogger } from '../../src/log.ts'
import { skipIf, why } from '../support/skip.ts'

/** What SQLite itself throws when a statement needs a page it may not have: SQLITE_FULL (max_page_count stands in for the disk). */
function sqliteFull(): unknown {
  const db = new Database(':memory:')
  try {
    db.run('CREATE TABLE t (b BLOB)')
    db.run(`PRAGMA max_page_count = ${db.query<{ page_count: number }, []>('PRAGMA page_count').get()!.page_count}`)
    db.query('INSERT INTO t VALUES (?)').run(new Uint8Array(64 * 1024))
  } catch (e) {
    return e
  } finally {
    db.close()
  }
  throw new Error('SQLite took the row')
}

skipIf(why.sqlitePass).describe('errorAnswer', () => {
  test("a SQLite statement that met a full disk outside the write path (a throttle's count): 503 with Retry-After, one warn line with SQLite's reason", async () => {
    const lines: string[] = []
    const logger = createLogger('text', 'info', (l) => lines.push(l))
    const e = sqliteFull()
    expect((e as { code?: string }).code).toBe('SQLITE_FULL')
    const res = errorAnswer(e, { logger, request: new Request('http://x/api/users/login', { method: 'POST' }) })
    expect({ status: res.status, retry: res.headers.get('retry-after'), body: await res.json() }).toEqual({
      status: 503,
      retry: '2',
      body: { errors: { database: ['is unavailable; try again shortly'] } },
    })
    expect(lines).toHaveLength(1)
    expect(lines[0]).toEndWith(
      ' WARN database unavailable method=POST path=/api/users/login reason="database or disk is full (SQLITE_FULL)"',
    )
  })

  test('an outage answers every request 503, and logs a line per method, path and reason at most once a second, the next counting the rest', () => {
    const lines: string[] = []
    const logger = createLogger('text', 'info', (l) => lines.push(l))
    const e = sqliteFull()
    const send = (path: string) => errorAnswer(e, { logger, request: new Request(`http://x${path}`, { method: 'POST' }) }).status
    try {
      setSystemTime(new Date('2026-11-29T12:00:00.000Z'))
      expect([send('/api/articles'), send('/api/articles'), send('/api/articles'), send('/api/users/login')]).toEqual([503, 503, 503, 503])
      setSystemTime(new Date('2026-11-29T12:00:00.999Z'))
      send('/api/articles')
      setSystemTime(new Date('2026-11-29T12:00:01.000Z'))
      send('/api/articles')
    } finally {
      setSystemTime()
    }
    expect(lines.map((l) => l.slice(l.indexOf(' WARN')))).toEqual([
      ' WARN database unavailable method=POST path=/api/articles reason="database or disk is full (SQLITE_FULL)"',
      ' WARN database unavailable method=POST path=/api/users/login reason="database or disk is full (SQLITE_FULL)"',
      ' WARN database unavailable method=POST path=/api/articles reason="database or disk is full (SQLITE_FULL)" more=3',
    ])
  })

  test('any other SQLite error is a fault: 500, logged with its stack', async () => {
    const lines: string[] = []
    const logger = createLogger('text', 'info', (l) => lines.push(l))
    const db = new Database(':memory:')
    let error: unknown
    try {
      db.run('SELECT * FROM missing')
    } catch (e) {
      error = e
    } finally {
      db.close()
    }
    expect(errorAnswer(error, { logger }).status).toBe(500)
    expect(lines[0]).toContain('ERROR unhandled error')
  })
})
