import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { version } from '../../package.json'
import { helpText } from '../../src/cli/help.ts'
import { COMMANDS } from '../../src/cli/registry.ts'
import { LEAN_BELOW_BYTES } from '../../src/cli/runtime.ts'
import { environment, memoryLimit } from '../../src/config.ts'
import {
  api,
  buildBinaryAway,
  freePort,
  installBinary,
  newCredentials,
  portIsFree,
  register,
  runCli,
  startServer,
  tempDir,
  unique,
  useBinary,
  withTimeout,
} from './support.ts'
import { skipIf, why } from '../support/skip.ts'

const binary = useBinary()

/** Opens a database file without changing it. */
const openReadonly = (path: string) => new Database(path, { readonly: true })

const userVersion = (db: Database) => (db.query('PRAGMA user_version').get() as { user_version: number }).user_version

const usernamesIn = (path: string): string[] => {
  const db = openReadonly(path)
  try {
    return (db.query('SELECT username FROM users').all() as { username: string }[]).map((r) => r.username)
  } finally {
    db.close()
  }
}

const createArticle = async (base: string, token: string) => {
  const article = { title: unique('Persisted title '), description: 'about persistence', body: 'It survives restarts.', tagList: ['e2e'] }
  const res = await api(base, 'POST', '/api/articles', { token, body: { article } })
  expect(res.status).toBe(201)
  return res.body.article as { slug: string; title: string }
}

/**
 * A new memory cgroup of 256 MiB (v1, or v2 with the memory controller), or undefined where this
 * process may not make one (not root, or no cgroup file system): the limit Bun reads as
 * `process.constrainedMemory()`, as in a container started with `--memory 256m`. `limit` sets
 * another (while no process is in it).
 */
function memoryCgroup(): { procs: string; limit: (mib: number) => void; remove: () => void } | undefined {
  const name = `conduit-test-${process.pid}`
  const candidates = [
    { dir: `/sys/fs/cgroup/memory/${name}`, file: 'memory.limit_in_bytes' },
    ...(existsSync('/sys/fs/cgroup/cgroup.subtree_control') &&
    readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'utf8').includes('memory')
      ? [{ dir: `/sys/fs/cgroup/${name}`, file: 'memory.max' }]
      : []),
  ]
  for (const c of candidates) {
    try {
      if (!existsSync(c.dir)) mkdirSync(c.dir)
      const limit = (mib: number) => writeFileSync(join(c.dir, c.file), String(mib * 2 ** 20))
      limit(256)
      return { procs: join(c.dir, 'cgroup.procs'), limit, remove: () => removeCgroup(c.dir) }
    } catch {
      try {
        rmdirSync(c.dir)
      } catch {}
    }
  }
  return undefined
}

/** Removes an emptied cgroup; the kernel may take a moment to see its last process gone. */
function removeCgroup(dir: string): void {
  for (let i = 0; ; i++) {
    try {
      rmdirSync(dir)
      return
    } catch (e) {
      if (i >= 40) throw e
      Bun.sleepSync(50)
    }
  }
}

/** A directory whose `conduit` joins the cgroup (`procs`) and then execs the binary: the pid started is the server's. */
function inCgroup(binary: string, procs: string): string {
  const dir = tempDir()
  copyFileSync(binary, join(dir, 'conduit-binary'))
  chmodSync(join(dir, 'conduit-binary'), 0o755)
  writeFileSync(join(dir, 'conduit'), `#!/bin/sh\necho $$ > ${procs} && exec "$(dirname "$0")/conduit-binary" "$@"\n`, { mode: 0o755 })
  return dir
}

/** A process's environment, as it runs (Linux). */
const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')

// Checked once when the file loads (made and removed at once): the 256 MiB test needs a cgroup of its own.
const cgroupMissing = (() => {
  const group = memoryCgroup()
  group?.remove()
  return !group && 'needs a memory cgroup it may create (root)'
})()

// Checked once when the file loads: the no-PORT test needs the default port.
const defaultPortFree = portIsFree(3000)

const fingerprint = (secret: string) => createHash('sha256').update(secret).digest('hex').slice(0, 8)

skipIf(why.sqlitePass).describe('the compiled binary', () => {
  test('serves the API from an empty directory with no environment but PORT, and keeps conduit.db next to itself', async () => {
    const dir = installBinary(binary())
    expect(readdirSync(dir)).toEqual(['conduit'])
    const server = await startServer(binary(), { dir, exactEnv: {}, port: freePort() })

    const files = readdirSync(dir)
    expect(files).toContain('conduit.db')
    expect(files).toContain('conduit.db-wal')

    const tags = await api(server.url, 'GET', '/api/tags')
    expect(tags.status).toBe(200)
    expect(tags.body).toEqual({ tags: [] })
    const user = await register(server.url)
    const me = await api(server.url, 'GET', '/api/user', { token: user.token })
    expect(me.status).toBe(200)
    expect(me.body.user.username).toBe(user.username)

    const stopped = await server.stop()
    expect(stopped).toMatchObject({ code: 0, timedOut: false })
    expect(usernamesIn(join(dir, 'conduit.db'))).toEqual([user.username])
  }, 60_000)

  skipIf(!defaultPortFree && 'port 3000 in use').test(
    'without PORT it listens on port 3000',
    async () => {
      const dir = installBinary(binary())
      const server = await startServer(binary(), { dir, exactEnv: {}, port: null })
      expect(server.port).toBe(3000)
      const user = await register(server.url)
      const stopped = await server.stop()
      expect(stopped).toMatchObject({ code: 0, timedOut: false })
      // it was this process (and this directory's database) that answered
      expect(usernamesIn(join(dir, 'conduit.db'))).toEqual([user.username])
    },
    60_000,
  )

  skipIf(process.platform !== 'linux' && 'reads /proc').test(
    'the server runs with its runtime settings (src/cli/runtime.ts) in the process it was started as; an operator’s value is kept',
    async () => {
      const server = await startServer(binary())
      // the pid the caller started is the server: it answers, it has the settings, and it stops on SIGTERM
      expect((await api(server.url, 'GET', '/api/tags')).status).toBe(200)
      const started = environOf(server.proc.pid)
      expect(started).toContain('BUN_JSC_useFTLJIT=0')
      expect(started).toContain('BUN_JSC_useConcurrentGC=0')
      // the lean collector only when asked (or on a host with under 384 MiB: the next test)
      if (memoryLimit() >= LEAN_BELOW_BYTES) expect(started.filter((v) => v.startsWith('BUN_JSC_minEdenToOldGenerationRatio='))).toEqual([])
      expect(await server.stop()).toMatchObject({ code: 0, timedOut: false })

      // the operator's FTL and collector choices are kept, and the lean collector added
      const chosen = await startServer(binary(), { env: { BUN_JSC_useFTLJIT: '1', BUN_JSC_useConcurrentGC: '1', LEAN_MEMORY: 'true' } })
      expect((await api(chosen.url, 'GET', '/api/tags')).status).toBe(200)
      const env = environOf(chosen.proc.pid)
      expect(env).toContain('BUN_JSC_useFTLJIT=1')
      expect(env).not.toContain('BUN_JSC_useFTLJIT=0')
      expect(env).toContain('BUN_JSC_useConcurrentGC=1')
      expect(env).not.toContain('BUN_JSC_useConcurrentGC=0')
      expect(env).toContain('BUN_JSC_smallHeapGrowthFactor=2')
      expect(env).toContain('BUN_JSC_minEdenToOldGenerationRatio=0.4')
      expect(await chosen.stop()).toMatchObject({ code: 0, timedOut: false })

      // one of the collector's variables set: none of the others is added
      const own = await startServer(binary(), { env: { LEAN_MEMORY: 'true', BUN_JSC_smallHeapGrowthFactor: '1.5' } })
      expect((await api(own.url, 'GET', '/api/tags')).status).toBe(200)
      const ownEnv = environOf(own.proc.pid)
      expect(ownEnv).toContain('BUN_JSC_smallHeapGrowthFactor=1.5')
      expect(ownEnv.filter((v) => v.startsWith('BUN_JSC_minEdenToOldGenerationRatio='))).toEqual([])
      expect(ownEnv).toContain('BUN_JSC_useFTLJIT=0')
      expect(await own.stop()).toMatchObject({ code: 0, timedOut: false })
    },
    60_000,
  )

  skipIf(cgroupMissing).test(
    'in a container of 256 MiB the server runs with the lean collector and CACHE_MB=30, says so at start, and keeps an operator’s CACHE_MB; in one of 384 MiB with the defaults',
    async () => {
      const group = memoryCgroup()!
      const started: Awaited<ReturnType<typeof startServer>>[] = []
      try {
        const small = await startServer(binary(), { dir: inCgroup(binary(), group.procs) })
        started.push(small)
        expect((await api(small.url, 'GET', '/api/tags')).status).toBe(200)
        const env = environOf(small.proc.pid)
        expect(env).toContain('LEAN_MEMORY=true')
        expect(env).toContain('CACHE_MB=30')
        expect(env).toContain('BUN_JSC_minEdenToOldGenerationRatio=0.4')
        expect(env).toContain('BUN_JSC_useFTLJIT=0')
        const said = await small.waitForStdout((out) => out.includes('memory settings'))
        expect(said).toContain('memory settings leanMemory=true cacheMb=30 memoryLimitMb=256')
        expect(await small.stop()).toMatchObject({ code: 0, timedOut: false })

        const chosen = await startServer(binary(), { dir: inCgroup(binary(), group.procs), env: { CACHE_MB: '60' } })
        started.push(chosen)
        expect((await api(chosen.url, 'GET', '/api/tags')).status).toBe(200)
        const chosenEnv = environOf(chosen.proc.pid)
        expect(chosenEnv).toContain('CACHE_MB=60')
        expect(chosenEnv).not.toContain('CACHE_MB=30')
        expect(chosenEnv).toContain('LEAN_MEMORY=true')
        expect(await chosen.stop()).toMatchObject({ code: 0, timedOut: false })

        group.limit(LEAN_BELOW_BYTES / 2 ** 20)
        const roomy = await startServer(binary(), { dir: inCgroup(binary(), group.procs) })
        started.push(roomy)
        expect((await api(roomy.url, 'GET', '/api/tags')).status).toBe(200)
        const roomyEnv = environOf(roomy.proc.pid)
        expect(roomyEnv).toContain('BUN_JSC_useFTLJIT=0')
        expect(roomyEnv.filter((v) => /^(LEAN_MEMORY|CACHE_MB|BUN_JSC_minEdenToOldGenerationRatio)=/.test(v))).toEqual([])
        expect(await roomy.stop()).toMatchObject({ code: 0, timedOut: false })
        // its whole output, read to the end by stop()
        expect(roomy.stdout()).toContain('listening')
        expect(roomy.stdout()).not.toContain('memory settings')
      } finally {
        // a cgroup with a process in it cannot be removed: a server a failed expectation left running goes first
        for (const server of started) await server.stop('SIGKILL')
        group.remove()
      }
    },
    60_000,
  )

  test('SIGTERM exits 0 within 5 s; after a restart on the same directory data and old tokens are still valid', async () => {
    const server = await startServer(binary())
    const user = await register(server.url)
    const article = await createArticle(server.url, user.token)

    const stopped = await server.stop('SIGTERM')
    expect(stopped.timedOut).toBe(false)
    expect(stopped.code).toBe(0)
    expect(stopped.ms).toBeLessThan(5_000)

    const again = await startServer(binary(), { dir: server.dir })
    const login = await api(again.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
    expect(login.status).toBe(200)
    expect(login.body.user.username).toBe(user.username)

    // the generated signing secret was kept in the database
    const me = await api(again.url, 'GET', '/api/user', { token: user.token })
    expect(me.status).toBe(200)
    expect(me.body.user).toMatchObject({ username: user.username, email: user.email })

    const read = await api(again.url, 'GET', `/api/articles/${encodeURIComponent(article.slug)}`)
    expect(read.status).toBe(200)
    expect(read.body.article).toMatchObject({ slug: article.slug, title: article.title, tagList: ['e2e'] })
    expect(read.body.article.author.username).toBe(user.username)

    const second = await again.stop()
    expect(second).toMatchObject({ code: 0, timedOut: false })
  }, 60_000)

  test('SIGHUP (the terminal closed) stops it as SIGTERM does, logged; started under nohup, it keeps serving', async () => {
    const server = await startServer(binary())
    const stopped = await server.stop('SIGHUP')
    expect(stopped).toMatchObject({ code: 0, timedOut: false })
    expect(server.stdout()).toContain('INFO shutting down reason=SIGHUP')
    expect(server.stdout()).toContain('INFO stopped')

    const nohup = await startServer(binary(), { dir: server.dir, wrapper: ['nohup'] })
    nohup.proc.kill('SIGHUP')
    await Bun.sleep(300)
    expect((await api(nohup.url, 'GET', '/health')).status).toBe(200)
    expect(await nohup.stop()).toMatchObject({ code: 0, timedOut: false })
  }, 60_000)

  test('SIGTERM during concurrent registrations exits 0 and every 2xx answer is persisted', async () => {
    const server = await startServer(binary())
    const N = 40
    let settled = 0
    let firstSettled!: () => void
    const first = new Promise<void>((resolve) => {
      firstSettled = resolve
    })
    type Outcome = { credentials: ReturnType<typeof newCredentials>; status: number; token?: string; error?: string }
    const requests: Promise<Outcome>[] = Array.from({ length: N }, () => {
      const credentials = newCredentials('load')
      return api(server.url, 'POST', '/api/users', { body: { user: credentials }, timeoutMs: 20_000 })
        .then(
          (res): Outcome => ({ credentials, status: res.status, token: res.body?.user?.token }),
          (e): Outcome => ({ credentials, status: 0, error: String(e) }),
        )
        .finally(() => {
          settled++
          firstSettled()
        })
    })
    // argon2id makes each registration take tens of milliseconds: as soon as one
    // has answered, the others are still being worked on.
    await withTimeout(first, 20_000, 'the first registration')
    const pendingAtSignal = N - settled
    const stopping = server.stop('SIGTERM')
    const outcomes = await withTimeout(Promise.all(requests), 30_000, 'the registrations')
    const stopped = await stopping

    expect(pendingAtSignal).toBeGreaterThan(0)
    expect(stopped.timedOut).toBe(false)
    expect(stopped.code).toBe(0)
    expect(stopped.ms).toBeLessThan(5_000)

    const succeeded = outcomes.filter((o) => o.status >= 200 && o.status < 300)
    // graceful: requests already in flight at the signal were still answered
    expect(succeeded.length).toBeGreaterThan(N - pendingAtSignal)
    // a request is answered, refused or cut off, never failed with a 5xx by the shutdown
    expect(outcomes.filter((o) => o.status >= 500).map((o) => o.status)).toEqual([])

    const stored = new Set(usernamesIn(join(server.dir, 'conduit.db')))
    for (const o of succeeded) expect(stored.has(o.credentials.username)).toBe(true)

    const again = await startServer(binary(), { dir: server.dir })
    const checks = await Promise.all(
      succeeded.map(async (o) => {
        const me = await api(again.url, 'GET', '/api/user', { token: o.token })
        const login = await api(again.url, 'POST', '/api/users/login', {
          body: { user: { email: o.credentials.email, password: o.credentials.password } },
          timeoutMs: 20_000,
        })
        return { username: o.credentials.username, me: me.status, login: login.status }
      }),
    )
    for (const c of checks) expect(c).toEqual({ username: c.username, me: 200, login: 200 })
    expect((await again.stop()).code).toBe(0)
  }, 90_000)

  test('/health and /ready answer 200 outside /api', async () => {
    const server = await startServer(binary())
    const health = await api(server.url, 'GET', '/health')
    expect(health.status).toBe(200)
    expect(health.headers.get('content-type')).toContain('application/json')
    expect(health.body).toEqual({ status: 'ok' })
    const ready = await api(server.url, 'GET', '/ready')
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: 'ready' })
    expect((await api(server.url, 'GET', '/api/health')).status).toBe(404)
    expect((await server.stop()).code).toBe(0)
  }, 60_000)

  test('the start-up line gives the site and its docs at an address a person can open (localhost for 0.0.0.0), and the database file as an absolute path', async () => {
    for (const [host, shown] of [
      [undefined, 'localhost'],
      ['127.0.0.1', '127.0.0.1'],
    ] as const) {
      const server = await startServer(binary(), { env: host ? { HOST: host } : {} })
      const site = `http://${shown}:${server.port}`
      const out = await server.waitForStdout((o) => o.includes('listening'))
      const line = out.split('\n').find((l) => l.includes('listening'))
      expect(line).toContain(`listening url=${site}/ docs=${site}/swagger database=${join(server.dir, 'conduit.db')} tokenSecret=database:`)
      // a new file is migrated, and that is said before it begins (it blocks the process while it runs)
      expect(out).toMatch(/INFO migrating the database database=\S+conduit\.db from=0 to=\d+\n[^\n]+INFO database migrated /)
      expect((await server.stop()).code).toBe(0)
      // the secret it made and kept, named by a fingerprint only: instances that must agree show the same
      const db = new Database(join(server.dir, 'conduit.db'), { readonly: true })
      const kept = db.query<{ value: string }, []>("SELECT value FROM settings WHERE key = 'jwt_secret'").get()!.value
      db.close()
      expect(line).toContain(` tokenSecret=database:${fingerprint(kept)}`)
      expect(line).not.toContain(kept)
    }
    const secret = 'an operator-chosen secret of forty characters'
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', JWT_SECRET: secret } })
    const out = await server.waitForStdout((o) => o.includes('listening'))
    expect(out).toContain(` tokenSecret=JWT_SECRET:${fingerprint(secret)}`)
    expect(out).not.toContain(secret)
    expect((await server.stop()).code).toBe(0)
  }, 60_000)

  test('a variable it does not read, near one it reads, is named at start with the one meant; the default is used', async () => {
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABSE_URL: 'postgres://u@db.example/conduit' } })
    const out = await server
      .waitForStdout((o) => o.includes('listening') && o.includes('did you mean'), 10_000)
      .catch(() => server.stdout())
    expect(out).toContain('WARN DATABSE_URL is not a variable conduit reads: did you mean DATABASE_URL? (conduit --help lists them)')
    expect(out).toContain(`database=${join(server.dir, 'conduit.db')}`)
    expect((await server.stop()).code).toBe(0)
  }, 60_000)

  test('its workers are its own entry points: built from a tree removed after, it reads a list on the slow lane and renders a long body', async () => {
    const away = await buildBinaryAway()
    const server = await startServer(away, { env: { HOST: '127.0.0.1' } })
    try {
      // two values of a filter always go to the slow lane (src/articles/list-sqlite.ts)
      const list = await api(server.url, 'GET', '/api/articles?tag=a&tag=b')
      expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { articles: [], articlesCount: 0 } })
      const user = await register(server.url)
      const body = 'A paragraph of *Markdown*.\n\n'.repeat(300)
      const made = await api(server.url, 'POST', '/api/articles', {
        token: user.token,
        body: { article: { title: 'Long', description: 'd', body } },
      })
      const page = await fetch(`${server.url}/article/${made.body.article.slug}`, { headers: { accept: 'text/html' } })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<p>A paragraph of <em>Markdown</em>.</p>')
      expect(server.stdout()).not.toContain('ERROR')
    } finally {
      await server.stop()
    }
  }, 120_000)

  test('/ and /api answer over HTTP: the web app (or, WEB_APP=false, a page about the API) for a browser, JSON for a program, HEAD without a body', async () => {
    const site = await startServer(binary())
    const home = await fetch(`${site.url}/`, { headers: { accept: 'text/html,*/*;q=0.8' } })
    expect({ status: home.status, type: home.headers.get('content-type') }).toEqual({ status: 200, type: 'text/html; charset=utf-8' })
    expect(await home.text()).toContain('<a class="navbar-brand" href="/">conduit</a>')
    // the page a browser had does not answer a program that asks for JSON
    const json = await fetch(`${site.url}/`, { headers: { accept: 'application/json' } })
    expect({ type: json.headers.get('content-type'), name: ((await json.json()) as { name: string }).name }).toEqual({
      type: 'application/json; charset=utf-8',
      name: 'conduit',
    })
    expect((await site.stop()).code).toBe(0)
    const server = await startServer(binary(), { env: { WEB_APP: 'false' } })
    const get = (path: string, accept: string, method = 'GET') => fetch(`${server.url}${path}`, { method, headers: { accept } })
    const page = await get('/', 'text/html,*/*;q=0.8')
    expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({ status: 200, type: 'text/html; charset=utf-8' })
    expect(await page.text()).toContain(`Conduit ${version}, serving the RealWorld Conduit API 2.0.0`)
    for (const path of ['/', '/api', '/api/']) {
      const about = await get(path, 'application/json')
      expect({ path, status: about.status, body: await about.json() }).toEqual({
        path,
        status: 200,
        body: { name: 'conduit', version, realworld: '2.0.0', api: '/api', docs: '/swagger', openapi: '/swagger/json', health: '/health' },
      })
      const head = await get(path, '*/*', 'HEAD')
      expect({ path, status: head.status, length: (await head.arrayBuffer()).byteLength }).toEqual({ path, status: 200, length: 0 })
    }
    expect((await server.stop()).code).toBe(0)
  }, 60_000)
})

skipIf(why.sqlitePass).describe('the command line', () => {
  test('--version, -v and `version` print the package.json version, one line', async () => {
    for (const args of [['--version'], ['-v'], ['version']]) {
      const r = await runCli(binary(), args)
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, code: 0, stdout: `${version}\n`, stderr: '' })
    }
  }, 30_000)

  test('--help, -h and `help` print the help made from the commands and the variables (test/unit/cli-help.test.ts checks its columns)', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await runCli(binary(), args)
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 0, stdout: `${helpText(COMMANDS, environment, version)}\n` })
    }
    for (const command of ['serve', 'migrate', 'backup', 'healthcheck']) expect(helpText(COMMANDS, environment, version)).toContain(command)
  }, 30_000)

  test.each([
    ['an unknown flag', ['--no-such-flag'], 'no-such-flag'],
    ['a non-numeric --port', ['--port', 'abc'], 'port'],
  ])(
    '%s exits non-zero with a one-line message on stderr',
    async (_, args, mention) => {
      const cwd = tempDir()
      const r = await runCli(binary(), args as string[], { cwd, timeoutMs: 10_000 })
      expect(r.signal).toBeNull()
      expect(r.code).not.toBe(0)
      const message = r.stderr.trim()
      expect(message.length).toBeGreaterThan(0)
      expect(message.split('\n')).toHaveLength(1)
      expect(message).toContain(mention as string)
      expect(r.stdout).toBe('')
      // it did not start serving or create a database on the way out
      expect(readdirSync(cwd)).toEqual([])
    },
    30_000,
  )

  test('migrate --db x.db creates a migrated database, and is idempotent', async () => {
    const cwd = tempDir()
    const r = await runCli(binary(), ['migrate', '--db', 'x.db'], { cwd })
    expect(r.code).toBe(0)
    expect(existsSync(join(cwd, 'x.db'))).toBe(true)
    expect(existsSync(join(cwd, 'conduit.db'))).toBe(false)
    const db = openReadonly(join(cwd, 'x.db'))
    const migrated = userVersion(db)
    const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name)
    db.close()
    expect(migrated).toBeGreaterThanOrEqual(1)
    expect(tables).toContain('users')

    const again = await runCli(binary(), ['migrate', '--db', 'x.db'], { cwd })
    expect(again.code).toBe(0)
    const db2 = openReadonly(join(cwd, 'x.db'))
    expect(userVersion(db2)).toBe(migrated)
    db2.close()
  }, 30_000)

  test('backup writes a consistent copy of the live database and refuses to overwrite a file', async () => {
    const server = await startServer(binary())
    const user = await register(server.url)
    const article = await createArticle(server.url, user.token)
    const conduit = join(server.dir, 'conduit')

    const r = await runCli(conduit, ['backup', 'out.db'], { cwd: server.dir })
    expect(r.code).toBe(0)
    const out = join(server.dir, 'out.db')
    expect(existsSync(out)).toBe(true)

    const copy = openReadonly(out)
    try {
      expect(copy.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      expect(userVersion(copy)).toBeGreaterThanOrEqual(1)
      expect(copy.query('SELECT email FROM users WHERE username = ?').get(user.username)).toEqual({ email: user.email })
      expect(copy.query('SELECT title FROM articles WHERE slug = ?').get(article.slug)).toEqual({ title: article.title })
    } finally {
      copy.close()
    }

    // an existing file is never overwritten: not a previous backup, not anything else
    const before = readFileSync(out)
    const twice = await runCli(conduit, ['backup', 'out.db'], { cwd: server.dir })
    expect(twice.code).not.toBe(0)
    expect(twice.code).not.toBeNull()
    expect(twice.stderr.trim()).toContain('exists')
    expect(readFileSync(out).equals(before)).toBe(true)

    writeFileSync(join(server.dir, 'precious.txt'), 'do not touch')
    const other = await runCli(conduit, ['backup', 'precious.txt'], { cwd: server.dir })
    expect(other.code).not.toBe(0)
    expect(readFileSync(join(server.dir, 'precious.txt'), 'utf8')).toBe('do not touch')

    // the server kept serving, reads and writes, through the backups
    expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
    await createArticle(server.url, user.token)
    expect((await server.stop()).code).toBe(0)
  }, 60_000)

  test('healthcheck --port N prints one line and exits 0 when the server runs, non-zero when nothing listens', async () => {
    const server = await startServer(binary())
    const up = await runCli(binary(), ['healthcheck', '--port', String(server.port)])
    expect(up).toMatchObject({ code: 0, stdout: `ok http://127.0.0.1:${server.port}/health\n`, stderr: '' })

    const nothing = freePort()
    const down = await runCli(binary(), ['healthcheck', '--port', String(nothing)], { timeoutMs: 10_000 })
    expect(down.signal).toBeNull()
    expect(down.code).not.toBe(0)
    expect(down.stderr.trim().length).toBeGreaterThan(0)

    expect((await server.stop()).code).toBe(0)
    const stopped = await runCli(binary(), ['healthcheck', '--port', String(server.port)], { timeoutMs: 10_000 })
    expect(stopped.code).not.toBe(0)
  }, 60_000)
})

// ------------------------------------------------------------- access log

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The access-log lines (text format) for one request: method, exact path and status, each as a word. */
function accessLines(stdout: string, method: string, path: string, status?: number): string[] {
  const m = new RegExp(`(^|[\\s="])${method}($|[\\s"])`)
  const p = new RegExp(`(^|[\\s="])${escapeRegExp(path)}($|[\\s"?])`)
  const s = status === undefined ? /./ : new RegExp(`(^|[\\s=:])${status}($|[\\s,}])`)
  return stdout.split('\n').filter((line) => m.test(line) && p.test(line) && s.test(line))
}

/** A duration such as `ms=12.3`, `12.3ms` or `duration=12`. */
const DURATION = /(\bms[=:]\s*\d)|(\d\s*ms\b)|(duration\w*[=:"\s]+\d)/i

skipIf(why.sqlitePass).describe('the access log', () => {
  test('one text line per request with method, path, status and duration; never the token or the password', async () => {
    const server = await startServer(binary())
    const credentials = newCredentials('logged')
    const wrongPassword = `wrong-${unique('password')}-x`

    const user = await register(server.url, credentials)
    const invalid = await api(server.url, 'POST', '/api/users', {
      body: { user: { username: unique('bad'), email: 'not an email', password: credentials.password } },
    })
    expect(invalid.status).toBe(422)
    const failed = await api(server.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: wrongPassword } } })
    expect(failed.status).toBe(401)
    const login = await api(server.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
    expect(login.status).toBe(200)
    const freshToken: string = login.body.user.token
    expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
    // a client that also puts its token in the query string
    const profilePath = `/api/profiles/${user.username}`
    expect((await api(server.url, 'GET', `${profilePath}?access_token=${freshToken}`, { token: freshToken })).status).toBe(200)
    const missingPath = `/api/articles/${unique('missing')}`
    expect((await api(server.url, 'GET', missingPath)).status).toBe(404)

    const expected: [string, string, number][] = [
      ['POST', '/api/users', 201],
      ['POST', '/api/users', 422],
      ['POST', '/api/users/login', 401],
      ['POST', '/api/users/login', 200],
      ['GET', '/api/user', 200],
      ['GET', profilePath, 200],
      ['GET', missingPath, 404],
    ]
    const stdout = await server.waitForStdout((out) => expected.every(([m, p, s]) => accessLines(out, m, p, s).length > 0))
    for (const [method, path, status] of expected) {
      const lines = accessLines(stdout, method, path, status)
      expect({ method, path, status, lines: lines.length }).toEqual({ method, path, status, lines: 1 })
      expect(lines[0]).toMatch(DURATION)
    }
    expect(accessLines(stdout, 'POST', '/api/users')).toHaveLength(2)
    expect(accessLines(stdout, 'POST', '/api/users/login')).toHaveLength(2)

    await server.stop()
    const everything = server.stdout() + server.stderr()
    for (const secret of [credentials.password, wrongPassword, user.token, freshToken]) expect(everything).not.toContain(secret)
    for (const token of [user.token, freshToken]) expect(everything).not.toContain(token.split('.')[2]!)
  }, 60_000)

  test('LOG_FORMAT=json writes one JSON object per line', async () => {
    const server = await startServer(binary(), { env: { LOG_FORMAT: 'json' } })
    const user = await register(server.url)
    expect((await api(server.url, 'GET', '/api/tags')).status).toBe(200)
    expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)

    const isRequest = (path: string) => (line: string) => {
      try {
        const o = JSON.parse(line)
        return o.path === path && typeof o.status === 'number'
      } catch {
        return false
      }
    }
    const stdout = await server.waitForStdout(
      (out) => out.split('\n').some(isRequest('/api/user')) && out.split('\n').some(isRequest('/api/tags')),
    )
    const lines = stdout.split('\n').filter((l) => l.trim() !== '')
    expect(lines.length).toBeGreaterThanOrEqual(3)
    const records = lines.map((line) => {
      const parsed = JSON.parse(line)
      expect(typeof parsed).toBe('object')
      return parsed
    })
    const tags = records.filter((r) => r.path === '/api/tags')
    expect(tags).toHaveLength(1)
    expect(tags[0]).toMatchObject({ method: 'GET', path: '/api/tags', status: 200 })
    const duration = ['ms', 'duration', 'durationMs', 'duration_ms', 'elapsed'].map((k) => tags[0][k]).find((v) => v !== undefined)
    expect(typeof duration).toBe('number')
    expect(records.filter((r) => r.path === '/api/users')).toEqual([expect.objectContaining({ method: 'POST', status: 201 })])

    await server.stop()
    expect(server.stdout()).not.toContain(user.token)
    expect(server.stdout()).not.toContain(user.password)
  }, 60_000)

  test('LOG_LEVEL=warn writes no request lines', async () => {
    const server = await startServer(binary(), { env: { LOG_LEVEL: 'warn' } })
    const user = await register(server.url)
    expect((await api(server.url, 'GET', '/api/tags')).status).toBe(200)
    expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
    // at the info level these lines show within milliseconds (test above)
    await Bun.sleep(1_000)
    const out = server.stdout() + server.stderr()
    expect(accessLines(out, 'GET', '/api/tags')).toEqual([])
    expect(accessLines(out, 'GET', '/api/user')).toEqual([])
    expect(accessLines(out, 'POST', '/api/users')).toEqual([])
    const stopped = await server.stop()
    expect(stopped.code).toBe(0)
    expect(accessLines(server.stdout(), 'GET', '/api/tags')).toEqual([])
    expect(accessLines(server.stdout(), 'GET', '/health')).toEqual([])
  }, 60_000)
})
