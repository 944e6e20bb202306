import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { INLINE_ROWS } from '../../src/articles/list-sqlite.ts'
import { sqliteBulk } from '../../src/db/bulk.ts'
import { SqliteChanges } from '../../src/db/sqlite/changes.ts'
import { seedDatabase } from '../../src/cli/seed-data.ts'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { sqliteStore } from '../../src/db/sqlite/store.ts'
import { send, testConfig } from '../support/app.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * On SQLite, list pages that may read many rows (deep offsets, several values
 * or filters) are read by a worker thread on its own connection, so the
 * event loop keeps answering everyone else. Its answers must be exactly the
 * inline ones.
 */
skipIf(why.sqliteOnly).describe('the slow lane (SQLite)', () => {
  test('answers deep offsets and multi-value filters exactly like the inline reads, without holding the event loop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conduit-slow-'))
    const path = join(dir, 'c.db')
    try {
      const db = openDatabase(path)
      migrate(db)
      await seedDatabase(sqliteBulk(db, new SqliteChanges(db)), {
        users: 40,
        articles: INLINE_ROWS + 2_000,
        tags: 12,
        follows: 5,
        favoritesPerArticle: 0.5,
        commentsPerArticle: 0,
        seed: 5,
        passwordHash: 'x',
      })
      const withLane = await createApp({ store: sqliteStore(db, path), config: testConfig() })
      // the same database without a file name: everything inline
      const inline = await createApp({ store: sqliteStore(db, ':memory:'), config: testConfig() })
      const paths = [
        `/api/articles?limit=20&offset=${INLINE_ROWS + 5}`,
        `/api/articles?limit=7&offset=${INLINE_ROWS + 1_990}`,
        `/api/articles?limit=20&offset=${INLINE_ROWS + 50_000}`,
        '/api/articles?tag=dragon-1&tag=river-2&tag=code-3&limit=30&offset=100',
        '/api/articles?favorited=user1&favorited=user2&limit=50',
        '/api/articles?author=user3&tag=dragon-1&limit=10',
      ]
      for (const p of paths) {
        const lane = await send(withLane, 'GET', p)
        const direct = await send(inline, 'GET', p)
        expect({ p, status: lane.status }).toEqual({ p, status: 200 })
        expect({ p, body: lane.body }).toEqual({ p, body: direct.body })
      }
      // while the worker reads a deep page, the event loop is free: a timer fires within a few ms
      let late = 0
      const t0 = performance.now()
      const timer = new Promise<void>((resolve) =>
        setTimeout(() => {
          late = performance.now() - t0
          resolve()
        }, 1),
      )
      const deep = send(withLane, 'GET', `/api/articles?limit=20&offset=${INLINE_ROWS + 1_000}&x=uncached`)
      await Promise.all([timer, deep])
      expect(late).toBeLessThan(50)
      expect((await deep).status).toBe(200)
      db.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
