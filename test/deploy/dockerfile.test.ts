import { expect, test } from 'bun:test'
import pkg from '../../package.json'
import { skipIf, why } from '../support/skip.ts'

// No Docker engine runs in CI: check what can be checked without one.
const dockerfile = await Bun.file(new URL('../../Dockerfile', import.meta.url)).text()
const lines = dockerfile.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'))

skipIf(why.sqlitePass).describe('Dockerfile', () => {
  test('passes the dockerfile-utils linter', () => {
    const lint = Bun.spawnSync(['node_modules/.bin/dockerfile-utils', 'lint', 'Dockerfile'], {
      cwd: new URL('../..', import.meta.url).pathname,
    })
    expect(lint.stdout.toString() + lint.stderr.toString()).toBe('')
    expect(lint.exitCode).toBe(0)
  })

  test('builds with the Bun version the project pins', () => {
    expect(pkg.packageManager).toBe(`bun@${pkg.engines.bun}`)
    expect(lines[0]).toBe(`FROM oven/bun:${pkg.engines.bun} AS build`)
  })

  test('builds with the same script CI runs', () => {
    expect(lines.some((l) => /^RUN bun run build\b/.test(l))).toBe(true)
    expect(pkg.scripts.build).toContain(
      'bun build --compile --bytecode --minify src/main.ts src/articles/list-worker.ts src/web/markdown-worker.ts --outfile dist/conduit',
    )
  })

  test('runs as a non-root user with the database in a /data volume', () => {
    const user = lines.find((l) => l.startsWith('USER '))
    expect(user).toBeDefined()
    expect(user).not.toMatch(/USER (root|0)\b/)
    expect(lines).toContain('VOLUME ["/data"]')
    expect(dockerfile).toContain('DATABASE_PATH=/data/conduit.db')
  })

  test('exposes 3000 and checks health with the binary itself', () => {
    expect(lines).toContain('EXPOSE 3000')
    expect(lines.find((l) => l.startsWith('HEALTHCHECK'))).toContain('CMD ["/app/conduit", "healthcheck"]')
  })
})
