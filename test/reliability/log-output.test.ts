import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { binaryDatabase } from '../support/backend.ts'
import { api, freePort, installBinary, register, useBinary, withTimeout } from '../e2e/support.ts'

/**
 * Where the log goes may stop taking it: the reader of a pipe exits (`conduit serve | head`), the
 * disk under a log file fills. The service goes on serving, the lines are dropped, and nothing is
 * printed as a stack: a failed write of a log line is not the service's failure.
 */

const binary = useBinary()
let running: Subprocess | undefined
afterEach(async () => {
  running?.kill('SIGKILL')
  await running?.exited
  running = undefined
})

describe('a log output that stops taking lines', () => {
  for (const workers of [1, 2]) {
    test(`serve${workers > 1 ? ` --workers ${workers}` : ''}: its pipe's reader gone, it goes on answering, reads and writes`, async () => {
      const db = await binaryDatabase()
      const dir = installBinary(binary())
      const port = freePort()
      const proc = Bun.spawn({
        cmd: [join(dir, 'conduit'), 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])],
        cwd: dir,
        // info: a line for every request, so every request meets the closed pipe
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...db.env },
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      running = proc
      const url = `http://127.0.0.1:${port}`
      // the first line says it listens; then the reader goes away, as `head` does
      const reader = proc.stdout.getReader()
      await withTimeout(reader.read(), 10_000, 'the first log line')
      await reader.cancel()
      const until = Date.now() + 10_000
      while ((await fetch(`${url}/ready`).catch(() => undefined))?.status !== 200) {
        expect(Date.now()).toBeLessThan(until)
        await Bun.sleep(50)
      }
      const statuses: number[] = []
      for (let i = 0; i < 20; i++) statuses.push((await fetch(`${url}/api/tags`, { headers: { connection: 'close' } })).status)
      const user = await register(url)
      const made = await api(url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'Logged nowhere', description: 'd', body: 'b' } },
      })
      expect({ statuses: [...new Set(statuses)], created: made.status, running: proc.exitCode }).toEqual({
        statuses: [200],
        created: 201,
        running: null,
      })
      proc.kill('SIGTERM')
      expect(await withTimeout(proc.exited, 15_000, 'exit after SIGTERM')).toBe(0)
      const stderr = await new Response(proc.stderr).text()
      expect(stderr).not.toContain('EPIPE')
      expect(stderr).not.toMatch(/^\s+at /m)
    }, 60_000)
  }
})
