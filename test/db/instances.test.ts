import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { listeningPids } from '../../bench/proc.ts'
import { binaryDatabase, onPostgres } from '../support/backend.ts'
import { type RoundRobin, roundRobin } from '../support/round-robin.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'
import {
  api,
  type ApiResponse,
  expectReadAsAnyone,
  installBinary,
  newCredentials,
  register,
  type Server,
  startServer,
  twoInstances,
  type User,
  useBinary,
} from '../e2e/support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * Two instances of the compiled binary on one database — two processes on one
 * SQLite file, or two instances on one PostgreSQL database — behind a plain
 * round-robin proxy: a write acknowledged by one is seen by the very next
 * request, which the other serves, with every cache warm. Then conflicting
 * writes sent to both at once, the shared login throttle, token revocation,
 * and faults (one instance killed; the database going away).
 */
const binary = useBinary()
const BACKEND = onPostgres ? 'PostgreSQL' : 'SQLite'

/** A new article with `title` (and a placeholder description and body), through `url`. */
const postArticle = (url: string, token: string, title: string) =>
  api(url, 'POST', '/api/articles', { token, body: { article: { title, description: 'd', body: 'b' } } })

describe(`two instances on one ${BACKEND} database behind a round-robin proxy`, () => {
  let a: Server
  let b: Server
  let lb: RoundRobin
  beforeAll(async () => {
    ;({ a, b } = await twoInstances(binary()))
    lb = roundRobin([a.url, b.url])
  }, 60_000)
  afterAll(async () => {
    lb?.stop()
    await a?.stop()
    await b?.stop()
  })

  /** Through the proxy: consecutive requests alternate between the instances. */
  const call = (method: string, path: string, options: { token?: string; body?: unknown } = {}) => api(lb.url, method, path, options)
  const ok = async (res: Promise<ApiResponse>, status = 200) => {
    const r = await res
    expect({ status: r.status, body: r.status === status ? 'ok' : r.body }).toEqual({ status, body: 'ok' })
    return r.body
  }
  /** A read sent to BOTH instances first (so both caches are warm), then the write, then the read again on each. */
  const both = (path: string, token?: string) => Promise.all([api(a.url, 'GET', path, { token }), api(b.url, 'GET', path, { token })])

  test('the proxy alternates: a write and the next read land on different instances', async () => {
    const before = lb.served.length
    await call('GET', '/api/tags')
    await call('GET', '/api/tags')
    expect(new Set(lb.served.slice(before))).toEqual(new Set([a.url, b.url]))
  })

  test('every kind of write is seen by the other instance right after it is acknowledged, caches warm', async () => {
    const [author, reader] = [await register(lb.url), await register(lb.url)]
    // follow first; warm every cache on both instances
    await ok(call('POST', `/api/profiles/${author.username}/follow`, { token: reader.token }))
    const tag = `t${Date.now().toString(36)}`
    const watched = [
      '/api/articles',
      `/api/articles?tag=${tag}`,
      `/api/articles?author=${author.username}`,
      '/api/tags',
      '/api/articles/feed',
    ]
    for (const p of watched) await both(p, reader.token)

    // new article (on one instance) -> lists, tag list, feed (the other)
    const created = await ok(
      call('POST', '/api/articles', {
        token: author.token,
        body: { article: { title: `Spread ${tag}`, description: 'd', body: 'b', tagList: [tag] } },
      }),
      201,
    )
    const slug = created.article.slug as string
    for (const p of watched) {
      for (const server of [a, b]) {
        const res = await api(server.url, 'GET', p, { token: reader.token })
        const seen = p === '/api/tags' ? res.body.tags.includes(tag) : res.body.articles.some((x: { slug: string }) => x.slug === slug)
        expect({ p, server: server.url === a.url ? 'a' : 'b', seen }).toEqual({ p, server: server.url === a.url ? 'a' : 'b', seen: true })
      }
    }

    // edit: title (new slug), body, tags
    await both(`/api/articles/${slug}`, reader.token)
    const edited = await ok(
      call('PUT', `/api/articles/${slug}`, {
        token: author.token,
        body: { article: { title: `Renamed ${tag}`, body: 'new body', tagList: ['other'] } },
      }),
    )
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', `/api/articles/${slug}`)).status).toBe(404)
      const now = await api(server.url, 'GET', `/api/articles/${edited.article.slug}`, { token: reader.token })
      expect(now.body.article).toMatchObject({ body: 'new body', tagList: ['other'] })
      expect((await api(server.url, 'GET', `/api/articles?tag=${tag}`)).body.articlesCount).toBe(0)
    }
    const newSlug = edited.article.slug as string

    // favorite -> count and the favoriter's list
    await both(`/api/articles/${newSlug}`, reader.token)
    await both(`/api/articles?favorited=${reader.username}`)
    await ok(call('POST', `/api/articles/${newSlug}/favorite`, { token: reader.token }))
    for (const server of [a, b]) {
      const art = await api(server.url, 'GET', `/api/articles/${newSlug}`, { token: reader.token })
      expect(art.body.article).toMatchObject({ favorited: true, favoritesCount: 1 })
      expect((await api(server.url, 'GET', `/api/articles?favorited=${reader.username}`)).body.articlesCount).toBe(1)
    }

    // comments: added, then deleted
    await both(`/api/articles/${newSlug}/comments`)
    const comment = await ok(
      call('POST', `/api/articles/${newSlug}/comments`, { token: reader.token, body: { comment: { body: 'hello' } } }),
      201,
    )
    for (const server of [a, b]) expect((await api(server.url, 'GET', `/api/articles/${newSlug}/comments`)).body.comments).toHaveLength(1)
    await ok(call('DELETE', `/api/articles/${newSlug}/comments/${comment.comment.id}`, { token: reader.token }), 204)
    for (const server of [a, b]) expect((await api(server.url, 'GET', `/api/articles/${newSlug}/comments`)).body.comments).toHaveLength(0)

    // profile change -> profile and the author shown in articles
    await both(`/api/profiles/${author.username}`, reader.token)
    await ok(call('PUT', '/api/user', { token: author.token, body: { user: { bio: 'a new bio' } } }))
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', `/api/profiles/${author.username}`, { token: reader.token })).body.profile).toMatchObject({
        bio: 'a new bio',
        following: true,
      })
      expect((await api(server.url, 'GET', `/api/articles/${newSlug}`)).body.article.author.bio).toBe('a new bio')
    }

    // unfollow -> the feed and the flag
    await both('/api/articles/feed', reader.token)
    await ok(call('DELETE', `/api/profiles/${author.username}/follow`, { token: reader.token }))
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', '/api/articles/feed', { token: reader.token })).body.articlesCount).toBe(0)
      expect((await api(server.url, 'GET', `/api/profiles/${author.username}`, { token: reader.token })).body.profile.following).toBe(false)
    }

    // follow again -> the feed and the flag
    await both('/api/articles/feed', reader.token)
    await both(`/api/profiles/${author.username}`, reader.token)
    await ok(call('POST', `/api/profiles/${author.username}/follow`, { token: reader.token }))
    for (const server of [a, b]) {
      const feed = await api(server.url, 'GET', '/api/articles/feed', { token: reader.token })
      expect(feed.body.articles.map((x: { slug: string }) => x.slug)).toEqual([newSlug])
      expect((await api(server.url, 'GET', `/api/profiles/${author.username}`, { token: reader.token })).body.profile.following).toBe(true)
    }

    // unfavorite -> count, flag and the favoriter's list
    await both(`/api/articles/${newSlug}`, reader.token)
    await both(`/api/articles?favorited=${reader.username}`)
    await ok(call('DELETE', `/api/articles/${newSlug}/favorite`, { token: reader.token }))
    for (const server of [a, b]) {
      const art = await api(server.url, 'GET', `/api/articles/${newSlug}`, { token: reader.token })
      expect(art.body.article).toMatchObject({ favorited: false, favoritesCount: 0 })
      expect((await api(server.url, 'GET', `/api/articles?favorited=${reader.username}`)).body.articlesCount).toBe(0)
    }

    // username change -> the profile under each name, the author in articles, lists by author
    const oldName = author.username
    const newName = `${oldName}r`
    await both(`/api/profiles/${oldName}`, reader.token)
    await both(`/api/articles/${newSlug}`, reader.token)
    await both(`/api/articles?author=${oldName}`)
    await ok(call('PUT', '/api/user', { token: author.token, body: { user: { username: newName } } }))
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', `/api/profiles/${oldName}`, { token: reader.token })).status).toBe(404)
      expect((await api(server.url, 'GET', `/api/profiles/${newName}`, { token: reader.token })).body.profile).toMatchObject({
        username: newName,
        following: true,
      })
      expect((await api(server.url, 'GET', `/api/articles/${newSlug}`, { token: reader.token })).body.article.author.username).toBe(newName)
      expect((await api(server.url, 'GET', `/api/articles?author=${oldName}`)).body.articlesCount).toBe(0)
      expect((await api(server.url, 'GET', `/api/articles?author=${newName}`)).body.articlesCount).toBe(1)
    }

    // delete -> gone everywhere
    await both(`/api/articles/${newSlug}`)
    await both(`/api/articles?author=${newName}`)
    await ok(call('DELETE', `/api/articles/${newSlug}`, { token: author.token }), 204)
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', `/api/articles/${newSlug}`)).status).toBe(404)
      expect((await api(server.url, 'GET', `/api/articles?author=${newName}`)).body.articlesCount).toBe(0)
    }
  }, 60_000)

  test('a password change signs out every other token on every instance at once; its sender stays signed in', async () => {
    const user = await register(lb.url)
    const login = await api(b.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
    const other = login.body.user.token as string
    for (const server of [a, b])
      for (const token of [user.token, other])
        for (let i = 0; i < 2; i++) expect((await api(server.url, 'GET', '/api/user', { token })).status).toBe(200)
    const changed = await api(a.url, 'PUT', '/api/user', { token: user.token, body: { user: { password: 'another password' } } })
    expect(changed.status).toBe(200)
    for (const server of [b, a]) {
      expect((await api(server.url, 'GET', '/api/user', { token: other })).status).toBe(401)
      await expectReadAsAnyone(server.url, '/api/articles', other)
      for (const token of [user.token, changed.body.user.token])
        expect((await api(server.url, 'GET', '/api/user', { token })).status).toBe(200)
    }
    // the same token changes it again on the other instance; that signs out the first answer's token everywhere
    const again = await api(b.url, 'PUT', '/api/user', { token: user.token, body: { user: { password: 'a third password' } } })
    expect(again.status).toBe(200)
    for (const server of [a, b]) {
      expect((await api(server.url, 'GET', '/api/user', { token: changed.body.user.token })).status).toBe(401)
      expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
    }
  })

  test('failed logins spent on either instance come out of one budget', async () => {
    const user = await register(lb.url)
    for (let i = 0; i < 10; i++) {
      const res = await call('POST', '/api/users/login', { body: { user: { email: user.email, password: `wrong-${i}-password` } } })
      expect(res.status).toBe(401)
    }
    for (const server of [a, b]) {
      const res = await api(server.url, 'POST', '/api/users/login', { body: { user: { email: user.email, password: user.password } } })
      expect(res.status).toBe(429)
    }
  })

  test('conflicting writes sent to both at once: one registration wins, counts exact, slugs distinct, no 5xx', async () => {
    const creds = newCredentials('twin')
    const regs = await Promise.all([a, b, a, b].map((s) => api(s.url, 'POST', '/api/users', { body: { user: creds } })))
    expect(regs.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])

    const author = await register(lb.url)
    const fans: User[] = []
    for (let i = 0; i < 16; i++) fans.push(await register(lb.url))
    const title = `Twin ${Date.now()}`
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api((i % 2 ? a : b).url, 'POST', '/api/articles', {
          token: author.token,
          body: { article: { title, description: 'd', body: 'b' } },
        }),
      ),
    )
    expect(made.map((r) => r.status)).toEqual(Array(8).fill(201))
    const slugs = made.map((r) => r.body.article.slug as string)
    expect(new Set(slugs).size).toBe(8)
    const target = slugs[0]!
    const favs = await Promise.all(
      fans.map((f, i) => api((i % 2 ? a : b).url, 'POST', `/api/articles/${target}/favorite`, { token: f.token })),
    )
    expect(favs.every((r) => r.status === 200)).toBe(true)
    for (const server of [a, b]) expect((await api(server.url, 'GET', `/api/articles/${target}`)).body.article.favoritesCount).toBe(16)
    const unfavs = await Promise.all(
      fans.map((f, i) => api((i % 2 ? b : a).url, 'DELETE', `/api/articles/${target}/favorite`, { token: f.token })),
    )
    expect(unfavs.every((r) => r.status === 200)).toBe(true)
    for (const server of [a, b]) expect((await api(server.url, 'GET', `/api/articles/${target}`)).body.article.favoritesCount).toBe(0)
  }, 60_000)
})

describe(`faults with two instances on one ${BACKEND} database`, () => {
  test('one instance killed under load: the other answers without errors; the killed one comes back with fresh data', async () => {
    const { a, b, env } = await twoInstances(binary())
    let survivor: Server = b
    try {
      const user = await register(a.url)
      const made = await postArticle(a.url, user.token, 'Before the kill')
      expect(made.status).toBe(201)
      for (let i = 0; i < 3; i++) await api(a.url, 'GET', '/api/articles', { token: user.token }) // warm a's caches
      // mixed load on b while a is killed
      let errors = 0
      let done = 0
      let stop = false
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const res =
            i % 5 === 0
              ? await api(b.url, 'POST', `/api/articles/${made.body.article.slug}/comments`, {
                  token: user.token,
                  body: { comment: { body: `c${i}` } },
                })
              : await api(b.url, 'GET', i % 2 ? '/api/articles' : `/api/articles/${made.body.article.slug}/comments`, { token: user.token })
          if (res.status >= 300) errors++
          done++
        }
      })()
      await Bun.sleep(300)
      const killed = await a.stop('SIGKILL')
      expect(killed.signal).toBe('SIGKILL')
      // while it is down, the other one writes
      const during = await postArticle(b.url, user.token, 'While a was down')
      expect(during.status).toBe(201)
      await Bun.sleep(300)
      stop = true
      await load
      expect({ errors, done: done > 10 }).toEqual({ errors: 0, done: true })
      // a comes back on the same database and serves what changed meanwhile
      const back = await startServer(binary(), { env, dir: a.dir })
      survivor = back
      const list = await api(back.url, 'GET', '/api/articles', { token: user.token })
      expect(list.body.articles.map((x: { title: string }) => x.title)).toContain('While a was down')
      await back.stop()
    } finally {
      await b.stop()
      if (survivor !== b) await survivor.stop()
    }
  }, 60_000)

  skipIf(why.postgresOnly).test(
    'the database going away and coming back: both answer 503 meanwhile, then recover with nothing stale',
    async () => {
      const db = await binaryDatabase()
      const url = new URL(db.env.DATABASE_URL!)
      const proxy = tcpProxy(url.hostname, Number(url.port || 5432))
      const viaProxy = new URL(url)
      viaProxy.host = `127.0.0.1:${proxy.port}`
      // a reaches the database through the proxy, b directly
      const a = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_URL: viaProxy.toString() } })
      const b = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_URL: url.toString() } })
      try {
        const user = await register(b.url)
        for (let i = 0; i < 2; i++) expect((await api(a.url, 'GET', '/api/articles', { token: user.token })).body.articlesCount).toBe(0)
        proxy.down()
        expect((await api(a.url, 'GET', '/api/articles', { token: user.token })).status).toBe(503)
        expect((await api(a.url, 'GET', '/ready')).status).toBe(503)
        // the database lives on: b writes while a cannot see it
        expect((await postArticle(b.url, user.token, 'During')).status).toBe(201)
        proxy.up()
        let res: ApiResponse | undefined
        for (let i = 0; i < 50; i++) {
          res = await api(a.url, 'GET', '/api/articles', { token: user.token })
          if (res.status === 200) break
          await Bun.sleep(200)
        }
        expect(res!.status).toBe(200)
        expect(res!.body.articlesCount).toBe(1)
      } finally {
        await a.stop()
        await b.stop()
        proxy.close()
      }
    },
    60_000,
  )
})

/** The child processes of `pid` (from /proc). */
async function children(pid: number): Promise<number[]> {
  const out = await Bun.$`pgrep -P ${pid}`.nothrow().quiet()
  return out.stdout.toString().split('\n').filter(Boolean).map(Number)
}

describe(`conduit serve --workers 2 (${BACKEND})`, () => {
  test('two workers on one port: a dead worker is replaced, SIGTERM stops them all gracefully', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', ...db.env },
      args: ['serve', '--workers', '2'],
    })
    try {
      let workers: number[] = []
      for (let i = 0; i < 50 && workers.length < 2; i++) {
        workers = await children(server.proc.pid)
        if (workers.length < 2) await Bun.sleep(100)
      }
      expect(workers).toHaveLength(2)
      const user = await register(server.url)
      for (let i = 0; i < 6; i++) expect((await api(server.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)

      // fresh connections all through the replacement (the kernel spreads new ones over every bound worker):
      // none may meet a worker that is not ready to serve (it used to bind first and answer 503 while starting)
      const statuses: (number | string)[] = []
      let replacing = true
      const prober = (async () => {
        while (replacing) {
          const r = await probe(`${server.url}/api/tags`)
          statuses.push('status' in r ? r.status : r.error)
          await Bun.sleep(2)
        }
      })()
      process.kill(workers[0]!, 'SIGKILL')
      let replaced: number[] = []
      for (let i = 0; i < 600; i++) {
        replaced = await children(server.proc.pid)
        if (replaced.length === 2 && !replaced.includes(workers[0]!)) break
        await Bun.sleep(10)
      }
      // until the replacement listens on the port (the supervisor waits a second before restarting a
      // worker that died young), and a while after: the kernel then hands it some of the new connections
      const replacement = replaced.find((pid) => !workers.includes(pid))
      const port = Number(new URL(server.url).port)
      let listening = false
      for (let i = 0; i < 300 && replacement !== undefined && !listening; i++) {
        listening = listeningPids(port, [replacement]).length === 1
        if (!listening) await Bun.sleep(20)
      }
      await Bun.sleep(500)
      replacing = false
      await prober
      expect(replaced).toHaveLength(2)
      expect(replaced).not.toContain(workers[0]!)
      expect(listening).toBe(true)
      // a request in flight to the killed worker may fail outright; every answer must be a 200
      const answers = statuses.filter((s) => typeof s === 'number')
      expect(answers.length).toBeGreaterThan(50)
      expect(answers.filter((s) => s !== 200)).toEqual([])
      // every connection lands on a live worker; writes by one are read by the other
      for (let i = 0; i < 10; i++) {
        const made = await postArticle(server.url, user.token, `w${i}`)
        expect(made.status).toBe(201)
        expect((await api(server.url, 'GET', `/api/articles/${made.body.article.slug}`)).status).toBe(200)
      }

      const stopped = await server.stop('SIGTERM')
      expect(stopped).toMatchObject({ code: 0, timedOut: false })
      for (const pid of replaced)
        expect(
          await Bun.$`kill -0 ${pid}`
            .nothrow()
            .quiet()
            .then((r) => r.exitCode),
        ).not.toBe(0)
    } finally {
      if (server.proc.exitCode === null) await server.stop('SIGKILL')
    }
  }, 60_000)

  test('the supervisor killed outright (SIGKILL): its workers stop by themselves and free the port', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...db.env },
      args: ['serve', '--workers', '2'],
    })
    let workers: number[] = []
    try {
      for (let i = 0; i < 50 && workers.length < 2; i++) {
        workers = await children(server.proc.pid)
        if (workers.length < 2) await Bun.sleep(100)
      }
      expect(workers).toHaveLength(2)
      await register(server.url)
      server.proc.kill('SIGKILL')
      const port = Number(new URL(server.url).port)
      let left = workers
      for (let i = 0; i < 100 && left.length; i++) {
        left = workers.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '))
        if (left.length) await Bun.sleep(100)
      }
      expect(left).toEqual([])
      expect(listeningPids(port, workers)).toEqual([])
      expect(server.stdout() + server.stderr()).toContain('supervisor gone; stopping')
    } finally {
      for (const pid of workers) if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL')
      await server.stop()
    }
  }, 60_000)

  test('SIGHUP to the whole group (the terminal closed): the supervisor stops its workers as on SIGTERM, exit 0', async () => {
    const db = await binaryDatabase()
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', ...db.env }, args: ['serve', '--workers', '2'] })
    let workers: number[] = []
    for (let i = 0; i < 50 && workers.length < 2; i++) {
      workers = await children(server.proc.pid)
      if (workers.length < 2) await Bun.sleep(100)
    }
    expect(workers).toHaveLength(2)
    // a hang-up reaches every process of the terminal's group: the workers leave it to the supervisor
    for (const pid of workers) process.kill(pid, 'SIGHUP')
    expect(await server.stop('SIGHUP')).toMatchObject({ code: 0, timedOut: false })
    expect(server.stdout()).toContain('INFO stopping workers reason=SIGHUP workers=2')
    expect(server.stdout()).not.toContain('worker exited; starting a new one')
  }, 60_000)
})

/** One probe: a fresh connection (as a balancer's health check opens), the status or the error. */
async function probe(url: string, init: RequestInit = {}): Promise<{ status: number; body: any } | { error: string }> {
  try {
    const res = await fetch(url, { ...init, headers: { connection: 'close', ...init.headers }, signal: AbortSignal.timeout(3_000) })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  } catch (e) {
    return { error: String(e) }
  }
}

/**
 * SIGTERM to a server started with SHUTDOWN_DELAY_SECONDS = delayMs / 1000,
 * then, until `windowMs` after the signal, rounds of probes on fresh
 * connections: /ready must answer 503 and /health, a read and a write 200
 * and 201 (the service keeps serving while the balancer notices). Returns
 * what did not, the writes acknowledged, and how the process ended.
 */
async function stopWithDelay(server: Server, token: string, delayMs: number, windowMs: number) {
  const stopping = server.stop('SIGTERM', delayMs + 10_000)
  const t0 = performance.now()
  const at = () => Math.round(performance.now() - t0)
  // the signal is handled at once (in every worker): /ready turns 503 within a moment
  let notReady = 0
  while (notReady < 5 && at() < 2_000) {
    const r = await probe(`${server.url}/ready`)
    notReady = 'status' in r && r.status === 503 ? notReady + 1 : 0
  }
  expect(notReady).toBe(5)
  const wrong: string[] = []
  const acknowledged: string[] = []
  let rounds = 0
  const expectStatus = (what: string, r: Awaited<ReturnType<typeof probe>>, status: number) => {
    if (!('status' in r) || r.status !== status)
      wrong.push(`${at()} ms ${what}: ${'status' in r ? `${r.status} ${JSON.stringify(r.body)}` : r.error}`)
  }
  while (at() < windowMs) {
    const title = `during the delay ${rounds}`
    const [ready, health, read, write] = await Promise.all([
      probe(`${server.url}/ready`),
      probe(`${server.url}/health`),
      probe(`${server.url}/api/articles?limit=5`, { headers: { authorization: `Token ${token}` } }),
      probe(`${server.url}/api/articles`, {
        method: 'POST',
        headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ article: { title, description: 'd', body: 'b' } }),
      }),
    ])
    expectStatus('GET /ready', ready, 503)
    if ('status' in ready && ready.status === 503) expect(ready.body).toEqual({ status: 'shutting down' })
    expectStatus('GET /health', health, 200)
    expectStatus('GET /api/articles', read, 200)
    expectStatus('POST /api/articles', write, 201)
    if ('status' in write && write.status === 201) acknowledged.push(write.body.article.slug)
    rounds++
    await Bun.sleep(100)
  }
  const lastProbeMs = at()
  return { wrong, acknowledged, rounds, lastProbeMs, stopped: await stopping }
}

/** The articles stored in a binary's database, read directly. */
async function storedArticles(db: Awaited<ReturnType<typeof binaryDatabase>>, dir: string): Promise<number> {
  const q = db.queries(dir)
  try {
    return await q.count('SELECT count(*) FROM articles')
  } finally {
    await q.close()
  }
}

describe(`SIGTERM with SHUTDOWN_DELAY_SECONDS (${BACKEND})`, () => {
  test('one process: /ready answers 503 at once while /health and the API keep answering through the delay; then it exits 0', async () => {
    const db = await binaryDatabase()
    const delayMs = 2_000
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', SHUTDOWN_DELAY_SECONDS: String(delayMs / 1000), ...db.env },
    })
    try {
      const user = await register(server.url)
      expect((await api(server.url, 'GET', '/ready')).status).toBe(200)
      const r = await stopWithDelay(server, user.token, delayMs, delayMs - 300)
      expect(r.wrong).toEqual([])
      expect(r.rounds).toBeGreaterThan(2)
      expect(r.stopped).toMatchObject({ code: 0, signal: null, timedOut: false })
      // it served the whole delay before closing
      expect(r.stopped.ms).toBeGreaterThanOrEqual(delayMs)
      // every write acknowledged during the delay is in the database
      expect(await storedArticles(db, server.dir)).toBe(r.acknowledged.length)
    } finally {
      if (server.proc.exitCode === null) await server.stop('SIGKILL')
    }
  }, 20_000)

  test('serve --workers 2: a delay longer than grace + 3 s (the old hard deadline) is served to its end; no worker is killed', async () => {
    const db = await binaryDatabase()
    // the workers' grace for in-flight requests is 4 s; the supervisor used to kill them 4 + 3 s after SIGTERM
    const delayMs = 8_000
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', SHUTDOWN_DELAY_SECONDS: String(delayMs / 1000), ...db.env },
      args: ['serve', '--workers', '2'],
    })
    try {
      let workers: number[] = []
      for (let i = 0; i < 50 && workers.length < 2; i++) {
        workers = await children(server.proc.pid)
        if (workers.length < 2) await Bun.sleep(100)
      }
      expect(workers).toHaveLength(2)
      const user = await register(server.url)
      // ready before the signal (each probe a new connection, which the kernel gives to either worker)
      for (let i = 0; i < 10; i++) expect((await probe(`${server.url}/ready`)) as object).toMatchObject({ status: 200 })

      const r = await stopWithDelay(server, user.token, delayMs, delayMs - 300)
      // probes ran past the old hard deadline, and every one was answered
      expect(r.lastProbeMs).toBeGreaterThan(4_000 + 3_000 + 300)
      expect(r.wrong).toEqual([])
      expect(r.stopped).toMatchObject({ code: 0, signal: null, timedOut: false })
      expect(r.stopped.ms).toBeGreaterThanOrEqual(delayMs)
      expect(server.stdout() + server.stderr()).not.toContain('did not stop in time')
      for (const pid of workers)
        expect(
          await Bun.$`kill -0 ${pid}`
            .nothrow()
            .quiet()
            .then((x) => x.exitCode),
        ).not.toBe(0)
      expect(await storedArticles(db, server.dir)).toBe(r.acknowledged.length)
    } finally {
      if (server.proc.exitCode === null) await server.stop('SIGKILL')
    }
  }, 20_000)
})

/**
 * One HTTP/1.1 connection kept open, as a client's keep-alive pool keeps it:
 * GETs one at a time, each answer's status and headers, and whether the
 * server has closed it.
 */
async function keptConnection(url: string) {
  const { hostname, port } = new URL(url)
  let received = ''
  let closed = false
  let wake = () => {}
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data: (_s, data) => {
        received += Buffer.from(data).toString('latin1')
        wake()
      },
      close: () => {
        closed = true
        wake()
      },
      error: () => {},
    },
  })
  // no event fires between a check and the wait that follows it (one thread)
  const until = async (done: () => boolean, ms: number) => {
    const end = performance.now() + ms
    while (!done() && performance.now() < end)
      await Promise.race([new Promise<void>((r) => (wake = r)), Bun.sleep(Math.max(1, end - performance.now()))])
    return done()
  }
  return {
    closedWithin: (ms: number) => until(() => closed, ms),
    async get(path: string) {
      received = ''
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`)
      const head = () => received.indexOf('\r\n\r\n')
      const length = () => Number(/\r\ncontent-length: *(\d+)/i.exec(received.slice(0, head()))?.[1] ?? 0)
      expect(await until(() => head() >= 0 && received.length >= head() + 4 + length(), 5_000)).toBe(true)
      const [statusLine = '', ...lines] = received.slice(0, head()).split('\r\n')
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      return { status: Number(statusLine.split(' ')[1]), connection: headers.get('connection') }
    },
    end: () => socket.end(),
  }
}

describe(`keep-alive connections across SIGTERM (${BACKEND})`, () => {
  test('during the delay each answer closes its connection (Connection: close): no client sends on one the stop then closes', async () => {
    const db = await binaryDatabase()
    const delayMs = 3_000
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', SHUTDOWN_DELAY_SECONDS: String(delayMs / 1000), ...db.env },
    })
    try {
      const kept = await keptConnection(server.url)
      // before the signal the connection is kept for the next request
      for (let i = 0; i < 2; i++) expect(await kept.get('/api/articles?limit=1')).toEqual({ status: 200, connection: undefined })
      expect(await kept.closedWithin(200)).toBe(false)
      const stopping = server.stop('SIGTERM', delayMs + 10_000)
      const t0 = performance.now()
      let ready = 200
      while (ready !== 503 && performance.now() - t0 < 2_000) ready = (await api(server.url, 'GET', '/ready')).status
      expect(ready).toBe(503)
      // still served, well within the delay, and the server ends the connection after the answer
      expect(await kept.get('/api/articles?limit=1')).toEqual({ status: 200, connection: 'close' })
      expect(await kept.closedWithin(1_000)).toBe(true)
      expect(performance.now() - t0).toBeLessThan(delayMs - 500)
      expect(await stopping).toMatchObject({ code: 0, signal: null, timedOut: false })
    } finally {
      if (server.proc.exitCode === null) await server.stop('SIGKILL')
    }
  }, 20_000)
})

describe(`a second signal cuts the shutdown delay short (${BACKEND})`, () => {
  test.each([
    ['one process', []],
    ['serve --workers 2', ['serve', '--workers', '2']],
  ])(
    '%s: SIGINT twice stops it in a moment, not after the delay; what was acknowledged is kept',
    async (_what, args) => {
      const db = await binaryDatabase()
      const server = await startServer(binary(), {
        env: { HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_DELAY_SECONDS: '30', ...db.env },
        args,
      })
      try {
        const user = await register(server.url)
        const made = await postArticle(server.url, user.token, 'Before the signals')
        expect(made.status).toBe(201)
        // as a terminal's Ctrl-C: to every process of the group, the workers too
        const expected = args.length ? 2 : 0
        let workers = await children(server.proc.pid)
        for (let i = 0; i < 50 && workers.length < expected; i++) {
          await Bun.sleep(100)
          workers = await children(server.proc.pid)
        }
        expect(workers).toHaveLength(expected)
        for (const pid of [server.proc.pid, ...workers]) process.kill(pid, 'SIGINT')
        // the first signal: not ready, still serving (the delay has begun)
        for (let i = 0; i < 50 && ((await probe(`${server.url}/ready`)) as { status?: number }).status !== 503; i++) await Bun.sleep(50)
        expect(await probe(`${server.url}/ready`)).toMatchObject({ status: 503 })
        // one Ctrl-C is one signal, in a worker too: a second later it is still serving out its delay
        await Bun.sleep(1_000)
        expect(await probe(`${server.url}/health`)).toMatchObject({ status: 200 })
        const stopped = await server.stop('SIGINT', 15_000)
        expect(stopped).toMatchObject({ code: 0, signal: null, timedOut: false })
        expect(stopped.ms).toBeLessThan(10_000)
        expect(server.stdout() + server.stderr()).toContain('second signal: the delay is cut short')
        expect(await storedArticles(db, server.dir)).toBe(1)
      } finally {
        if (server.proc.exitCode === null) await server.stop('SIGKILL')
      }
    },
    40_000,
  )
})

describe(`SIGTERM while clients that have gone still have queries running (${BACKEND})`, () => {
  /**
   * 64 clients read pages nobody read before (each a query) through a pool of
   * 2, then all hang up at once and SIGTERM follows: their requests hold no
   * connection the server waits for, but their queries are still queued for
   * the pool. Closing the pool under them failed them ("database
   * unavailable" logged for each). On SQLite, where reads answer
   * synchronously, nothing is left running; the same checks hold. The moment
   * matters (a query queued, or not, when the signal comes): five tries,
   * each must be clean.
   */
  test('the queries finish before the pool closes: no "database unavailable", exit 0', async () => {
    const db = await binaryDatabase()
    const dir = installBinary(binary())
    // pages with articles on them: reads that take the pool a moment
    const seeded = await Bun.$`./conduit seed --db ${db.env.DATABASE_URL ?? 'conduit.db'} --users 100 --articles 2000 --seed 1`
      .cwd(dir)
      .quiet()
      .nothrow()
    expect(seeded.exitCode).toBe(0)
    for (let attempt = 0; attempt < 5; attempt++) {
      const server = await startServer(binary(), {
        dir,
        env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_POOL_MAX: '2', ...db.env },
      })
      try {
        const hangUp = new AbortController()
        let sent = 0
        let stopping = false
        const clients = Array.from({ length: 64 }, async () => {
          while (!stopping) {
            const n = sent++
            try {
              const r = await fetch(`${server.url}/api/articles?offset=${n}&limit=${1 + (n % 20)}`, { signal: hangUp.signal })
              await r.arrayBuffer()
            } catch {
              return
            }
          }
        })
        await Bun.sleep(800)
        stopping = true
        hangUp.abort()
        const stopped = await server.stop('SIGTERM')
        await Promise.all(clients)
        expect(sent).toBeGreaterThan(64)
        expect(stopped).toMatchObject({ code: 0, signal: null, timedOut: false })
        expect(server.stdout() + server.stderr()).not.toContain('database unavailable')
      } finally {
        if (server.proc.exitCode === null) await server.stop('SIGKILL')
      }
    }
  }, 60_000)
})
