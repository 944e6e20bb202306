import { afterAll, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { hardDeadlineMs } from '../../src/cluster.ts'
import { defaults } from '../../src/config.ts'
import { binaryDatabase, onPostgres } from '../support/backend.ts'
import { api, freePort, register, type Server, startServer, tempDir, useBinary } from '../e2e/support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * The scale-out example (deploy/compose.yml, deploy/haproxy.cfg). No Docker
 * engine runs here, so the compose file is checked by reading it, and the
 * HAProxy configuration by HAProxy itself (`haproxy -c`) and by running it,
 * with the timings shortened, in front of three instances while they are
 * restarted one after another under load: no request may fail, no
 * acknowledged write may be lost.
 */
const ROOT = join(import.meta.dir, '../..')
const compose = Bun.YAML.parse(readFileSync(join(ROOT, 'deploy/compose.yml'), 'utf8')) as any
const haproxyCfg = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8')
const haproxy = Bun.which('haproxy')
const INSTANCES = ['conduit1', 'conduit2', 'conduit3']

skipIf(why.sqlitePass).describe('deploy/compose.yml', () => {
  test('runs PostgreSQL, three instances of the image and HAProxy', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['conduit1', 'conduit2', 'conduit3', 'lb', 'postgres'])
    expect(compose.services.postgres.image).toMatch(/^postgres:\d+/)
    expect(compose.services.postgres.healthcheck.test.join(' ')).toContain('pg_isready')
    expect(compose.services.lb.image).toMatch(/^haproxy:/)
    expect(compose.services.lb.volumes).toContain('./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro')
  })

  test('every instance reaches the database the postgres service creates, once it is healthy', () => {
    const pg = compose.services.postgres.environment
    for (const name of INSTANCES) {
      const s = compose.services[name]
      expect(s.build.dockerfile).toBe('Dockerfile')
      const url = new URL(s.environment.DATABASE_URL)
      expect({ name, host: url.hostname, port: url.port, user: url.username, password: url.password, db: url.pathname.slice(1) }).toEqual({
        name,
        host: 'postgres',
        port: '5432',
        user: pg.POSTGRES_USER,
        password: pg.POSTGRES_PASSWORD,
        db: pg.POSTGRES_DB,
      })
      expect(s.depends_on.postgres.condition).toBe('service_healthy')
      expect(s.environment.TRUST_PROXY).toBe('true')
      // the whole shutdown fits in the time Docker waits before SIGKILL: the readiness delay, the
      // drain grace and the time to close (what `serve --workers N` allows its workers too)
      const delayMs = Number(s.environment.SHUTDOWN_DELAY_SECONDS) * 1000
      const shutdownMs = hardDeadlineMs({ shutdownDelayMs: delayMs, shutdownGraceMs: defaults.shutdownGraceMs })
      expect(shutdownMs).toBeLessThan(Number.parseInt(s.stop_grace_period, 10) * 1000)
    }
  })

  test('HAProxy sends to exactly those instances, on the port the image listens on, checking /ready', () => {
    const servers = [...haproxyCfg.matchAll(/^\s*server (\S+) (\S+):(\d+)/gm)].map((m) => [m[1], m[2], m[3]])
    expect(servers).toEqual(INSTANCES.map((n) => [n, n, '3000']))
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toContain('PORT=3000')
    expect(haproxyCfg).toContain('option httpchk GET /ready')
    expect(haproxyCfg).toContain('balance roundrobin')
    expect(haproxyCfg).toContain(`bind :${compose.services.lb.ports[0].split(':')[1]}`)
  })

  skipIf(!haproxy && 'haproxy missing').test('haproxy -c finds deploy/haproxy.cfg valid', async () => {
    const r = Bun.spawnSync({ cmd: [haproxy!, '-c', '-f', join(ROOT, 'deploy/haproxy.cfg')], stdout: 'pipe', stderr: 'pipe' })
    expect(r.exitCode).toBe(0)
    expect(r.stdout.toString()).toContain('Configuration file is valid')
  })
})

skipIf(!haproxy && 'haproxy missing').describe('HAProxy with deploy/haproxy.cfg in front of three instances', () => {
  const binary = useBinary()
  const procs: Subprocess[] = []
  afterAll(() => {
    for (const p of procs) p.kill('SIGKILL')
  })

  test('a rolling restart under load loses no request and no acknowledged write', async () => {
    const db = await binaryDatabase()
    const dir = tempDir()
    const env = {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      SHUTDOWN_DELAY_SECONDS: '1',
      TRUST_PROXY: 'true',
      ...(onPostgres ? db.env : { DATABASE_PATH: join(dir, 'shared.db') }),
    }
    const ports = INSTANCES.map(() => freePort())
    const servers: Server[] = []
    for (const port of ports) servers.push(await startServer(binary(), { env, port }))
    // the shipped configuration, with local addresses and shorter health-check timings (a check may take a second, as one
    // takes `inter` there: at 100 ms, three instances answering slowly at once under this load were all marked down)
    const lbPort = freePort()
    const cfg = haproxyCfg
      .replace(/^\s*log stdout.*$/m, '')
      .replace(/^resolvers docker[\s\S]*?(?=^frontend)/m, '')
      .replace(/bind :\d+/, `bind 127.0.0.1:${lbPort}`)
      .replace(/^\s*default-server .*$/m, '    timeout check 1s\n    default-server check inter 100ms fall 1 rise 1')
      .replace(/^\s*server (\S+) \S+:3000$/gm, (_m, name: string) => `    server ${name} 127.0.0.1:${ports[INSTANCES.indexOf(name)]}`)
    const cfgPath = join(dir, 'haproxy.cfg')
    writeFileSync(cfgPath, cfg)
    const lb = Bun.spawn({ cmd: [haproxy!, '-f', cfgPath], stdout: 'ignore', stderr: 'pipe' })
    procs.push(lb)
    const base = `http://127.0.0.1:${lbPort}`
    for (let i = 0; i < 50; i++) {
      const ok = await fetch(`${base}/health`)
        .then((r) => r.status === 200)
        .catch(() => false)
      if (ok) break
      await Bun.sleep(100)
    }

    const user = await register(base)
    const acknowledged: string[] = []
    const failures: string[] = []
    let stop = false
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const write = i % 4 === 0
        const res = write
          ? await api(base, 'POST', '/api/articles', {
              token: user.token,
              body: { article: { title: `roll ${w} ${i}`, description: 'd', body: 'b' } },
            }).catch((e) => ({ status: 0, body: String(e) }) as never)
          : await api(base, 'GET', '/api/articles?limit=5', { token: user.token }).catch((e) => ({ status: 0, body: String(e) }) as never)
        if (res.status === (write ? 201 : 200)) {
          if (write) acknowledged.push(res.body.article.slug)
        } else failures.push(`${write ? 'POST' : 'GET'} ${res.status}${res.status === 0 ? ` ${res.body}` : ''}`) // 0: the error fetch threw
      }
    }
    const load = Promise.all([0, 1, 2, 3].map(worker))
    // restart each instance in turn: SIGTERM (ready turns 503, then it drains), a new one on its port
    for (let k = 0; k < servers.length; k++) {
      await Bun.sleep(300)
      const stopped = await servers[k]!.stop('SIGTERM')
      expect(stopped.code).toBe(0)
      servers[k] = await startServer(binary(), { env, port: ports[k] })
    }
    await Bun.sleep(300)
    stop = true
    await load
    expect(failures).toEqual([])
    expect(acknowledged.length).toBeGreaterThan(10)
    // every acknowledged article is there
    const all = await api(servers[0]!.url, 'GET', `/api/articles?author=${user.username}&limit=100`)
    expect(all.body.articlesCount).toBe(acknowledged.length)
    // HAProxy says the scheme itself: a client's X-Forwarded-Proto does not pass for TLS (the cookie's name and Secure)
    const signIn = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'sec-fetch-site': 'same-origin', 'x-forwarded-proto': 'https' },
      body: new URLSearchParams({ email: user.email, password: user.password }),
    })
    const cookie = signIn.headers.get('set-cookie') ?? ''
    expect({ status: signIn.status, name: cookie.split('=')[0], secure: cookie.includes('Secure') }).toEqual({
      status: 303,
      name: 'conduit_session',
      secure: false,
    })
    for (const s of servers) await s.stop()

    // no instance left: HAProxy's own 503 is the API's envelope, with Retry-After
    let down: Response | undefined
    for (let i = 0; i < 50 && down?.status !== 503; i++) {
      down = await fetch(`${base}/api/tags`)
      if (down.status !== 503) await Bun.sleep(100)
    }
    lb.kill('SIGTERM')
    expect([down?.status, down?.headers.get('content-type'), down?.headers.get('retry-after')]).toEqual([
      503,
      'application/json; charset=utf-8',
      '2',
    ])
    expect(await down?.json()).toEqual({ errors: { service: ['is unavailable; try again shortly'] } })
  }, 90_000)
})
