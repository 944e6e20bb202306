import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaults } from '../../src/config.ts'
import { silentLogger } from '../../src/log.ts'
import { serve } from '../../src/server.ts'
import { skipIf, why } from '../support/skip.ts'

skipIf(why.sqlitePass).describe('the request timeout', () => {
  // (A connection that stalls before its headers are complete is closed by
  // Bun's HTTP layer itself after about 10 s, whatever the setting.)
  test('closes a connection whose body stalls, after the configured idle time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conduit-timeout-'))
    const running = await serve(
      { ...defaults, port: 0, host: '127.0.0.1', databasePath: join(dir, 'c.db'), requestTimeoutSeconds: 1 },
      silentLogger,
    )
    try {
      const port = Number(new URL(running.url.replace('0.0.0.0', '127.0.0.1')).port)
      let closedAt = 0
      const t0 = performance.now()
      const socket = await Bun.connect({
        hostname: '127.0.0.1',
        port,
        socket: {
          data() {},
          close() {
            closedAt = performance.now()
          },
        },
      })
      // a body that never arrives: a slow (or malicious) client holding a request open
      socket.write('POST /api/users HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"user":')
      for (let i = 0; i < 80 && !closedAt; i++) await Bun.sleep(100)
      expect(closedAt).toBeGreaterThan(0)
      expect(closedAt - t0).toBeGreaterThan(900)
      socket.end()
    } finally {
      await running.shutdown('test')
      rmSync(dir, { recursive: true, force: true })
    }
  }, 15_000)
})
