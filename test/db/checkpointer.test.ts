import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaults } from '../../src/config.ts'
import { silentLogger } from '../../src/log.ts'
import { serve } from '../../src/server.ts'
import { skipIf, why } from '../support/skip.ts'

skipIf(why.sqliteOnly).describe('the background checkpointer', () => {
  test('copies committed pages into the database file without the writer doing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conduit-ckpt-'))
    const path = join(dir, 'conduit.db')
    const running = await serve(
      { ...defaults, port: 0, host: '127.0.0.1', databasePath: path, passwordHash: { memoryCost: 256, timeCost: 1 } },
      silentLogger,
    )
    try {
      const base = running.url.replace('0.0.0.0', '127.0.0.1')
      const user = { username: 'ckpt', email: 'ckpt@example.com', password: 'password123' }
      const token = ((await (await fetch(`${base}/api/users`, { method: 'POST', body: JSON.stringify({ user }) })).json()) as any).user
        .token
      await Bun.sleep(400) // let a checkpoint pass, then measure from here
      const before = statSync(path).size
      for (let i = 0; i < 60; i++) {
        const article = { title: `Checkpointed ${i}`, description: 'd', body: 'x'.repeat(2000), tagList: [`t${i}`] }
        const res = await fetch(`${base}/api/articles`, {
          method: 'POST',
          headers: { authorization: `Token ${token}` },
          body: JSON.stringify({ article }),
        })
        expect(res.status).toBe(201)
      }
      // the writer's own auto-checkpoint waits for 20,000 WAL pages; these
      // writes are a few hundred, so only the background worker moves them
      await Bun.sleep(600)
      expect(statSync(path).size).toBeGreaterThan(before + 60 * 2000)
    } finally {
      await running.shutdown('test')
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
