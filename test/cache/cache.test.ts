import { describe, expect, test } from 'bun:test'
import { t } from 'elysia'
import { existsSync, rmSync } from 'node:fs'
import { type App, createApp } from '../../src/app.ts'
import { signToken } from '../../src/auth/jwt.ts'
import { DepCache, entryOverhead } from '../../src/cache/cache.ts'
import { Flights } from '../../src/cache/flights.ts'
import { SlabCache } from '../../src/cache/slab.ts'
import { mulberry32 } from '../../src/random.ts'
import { BUDGETS, CACHE_BUDGET_MB, createCaches, type PartName } from '../../src/cache/caches.ts'
import { keys } from '../../src/keys/keys.ts'
import { Versions } from '../../src/keys/versions.ts'
import { SIGNAL_FALLBACK_MS } from '../../src/db/sqlite/changes.ts'
import { migrate } from '../../src/db/sqlite/migrate.ts'
import { openDatabase } from '../../src/db/sqlite/open.ts'
import { sqliteStore } from '../../src/db/sqlite/store.ts'
import { queryReader } from '../../src/http/query.ts'
import { ResponseCache } from '../../src/http/responses.ts'
import { pathAndQuery, searchOf } from '../../src/http/url.ts'
import { send, type TestApp, testApp, testConfig } from '../support/app.ts'
import { addComment, conduitApp, favorite, follow, registerUsers } from '../support/conduit.ts'
import { createArticle, expectTokenRefused } from '../support/fixtures.ts'
import { onPostgres, testDatabase } from '../support/backend.ts'

/**
 * Answers are cached per viewer and URL, and verified tokens are remembered
 * (src/http/responses.ts, src/users/tokens.ts). These tests pin what the
 * caches must never do: serve a revoked or expired token, or one viewer's
 * answer to another.
 */

/**
 * Apps on their own connections to one SQLite file (what worker processes
 * are), in a fresh directory removed after `fn`.
 */
async function onOneFile(fn: (open: () => Promise<{ store: ReturnType<typeof sqliteStore>; app: App }>, path: string) => Promise<void>) {
  const dir = `/tmp/conduit-cache-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`
  await Bun.$`mkdir -p ${dir}`
  const path = `${dir}/c.db`
  const stores: ReturnType<typeof sqliteStore>[] = []
  try {
    await fn(async () => {
      const db = openDatabase(path)
      migrate(db)
      const store = sqliteStore(db, path)
      stores.push(store)
      return { store, app: await createApp({ store, config: testConfig({ passwordHash: { memoryCost: 256, timeCost: 1 } }) }) }
    }, path)
  } finally {
    for (const store of stores) await store.close()
    await Bun.$`rm -rf ${dir}`
  }
}
const getJson = async (app: App, path: string) => (await (await app.handle(new Request(`http://localhost${path}`))).json()) as any

describe('cached answers', () => {
  test('with the smallest cache budget (CACHE_MB=1) every answer stays exact while the caches evict', async () => {
    const app = await testApp({ passwordHash: { memoryCost: 256, timeCost: 1 }, cacheMb: 1 })
    const [author, reader] = await registerUsers(app, 2)
    const slugs: string[] = []
    // 40 articles of 8 KB: far more than the article, item and response caches hold at this budget
    for (let i = 0; i < 40; i++) slugs.push((await createArticle(app, author!.token, { body: `${i} `.padEnd(8000, 'x') })).slug)
    const favorited = new Set<string>()
    const check = async () => {
      for (const token of [undefined, reader!.token]) {
        for (const [i, slug] of slugs.entries()) {
          const one = await app.request('GET', `/api/articles/${slug}`, token ? { token } : {})
          expect(one.body.article.body).toBe(`${i} `.padEnd(8000, 'x'))
          expect(one.body.article.favoritesCount).toBe(favorited.has(slug) ? 1 : 0)
          expect(one.body.article.favorited).toBe(token !== undefined && favorited.has(slug))
        }
        for (let offset = 0; offset < 40; offset += 7) {
          const page = await app.request('GET', `/api/articles?limit=7&offset=${offset}`, token ? { token } : {})
          const expected = slugs
            .slice()
            .reverse()
            .slice(offset, offset + 7)
          expect(page.body.articles.map((a: { slug: string }) => a.slug)).toEqual(expected)
          expect(page.body.articles.map((a: { favoritesCount: number }) => a.favoritesCount)).toEqual(
            expected.map((s) => (favorited.has(s) ? 1 : 0)),
          )
        }
      }
    }
    await check()
    await check() // now from whatever the caches kept
    for (const slug of slugs.filter((_, i) => i % 3 === 0)) {
      await favorite(app, reader!.token, slug)
      favorited.add(slug)
    }
    await check()
    await check()
  })

  test('a password change revokes the old token even for a URL it was answered at before', async () => {
    const app = await conduitApp()
    const [jake] = await registerUsers(app, 1)
    const article = await createArticle(app, jake!.token)
    // jake's view differs from anyone's
    await favorite(app, jake!.token, article.slug)
    // another session of jake's, signed out by the change the first one makes
    const login = await app.request('POST', '/api/users/login', { body: { user: { email: jake!.email, password: jake!.password } } })
    const other = login.body.user.token as string
    for (let i = 0; i < 2; i++) expect((await app.request('GET', '/api/articles', { token: other })).body.articles[0].favorited).toBe(true)
    const changed = await app.request('PUT', '/api/user', { token: jake!.token, body: { user: { password: 'a new password' } } })
    expect(changed.status).toBe(200)
    // jake's kept answer is not served to it: it reads as anyone
    await expectTokenRefused(app, `Token ${other}`, ['/api/articles'])
    for (const token of [jake!.token, changed.body.user.token])
      expect((await app.request('GET', '/api/articles', { token })).body.articles[0].favorited).toBe(true)
  })

  test('a token that expires is refused after it expires, though it was verified and cached before', async () => {
    const app = await conduitApp()
    const [jake] = await registerUsers(app, 1)
    const secret = (await app.db.get<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'"))!.value
    const id = (await app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', jake!.username))!.id
    const article = await createArticle(app, jake!.token)
    await favorite(app, jake!.token, article.slug)
    // a second at least before it expires, for the reads that keep it
    const now = Math.floor(Date.now() / 1000)
    const shortLived = signToken(secret, { sub: id, ver: 0, iat: now, exp: now + 2 })
    for (let i = 0; i < 2; i++)
      expect((await app.request('GET', '/api/articles', { token: shortLived })).body.articles[0].favorited).toBe(true)
    await Bun.sleep(Math.max(0, (now + 3) * 1000 + 100 - Date.now()))
    await expectTokenRefused(app, `Token ${shortLived}`, ['/api/articles'])
  })

  test('each viewer gets their own flags at the same URL, anonymous callers none', async () => {
    const app = await conduitApp()
    const [author, fan, other] = await registerUsers(app, 3)
    const article = await createArticle(app, author!.token)
    await favorite(app, fan!.token, article.slug)
    const flag = async (token?: string) => {
      const res = await app.request('GET', '/api/articles', token ? { token } : {})
      return res.body.articles[0].favorited
    }
    for (let i = 0; i < 2; i++) {
      expect(await flag(fan!.token)).toBe(true)
      expect(await flag(other!.token)).toBe(false)
      expect(await flag()).toBe(false)
    }
  })

  test('a write through another process on the same file is seen at once, with warm caches', async () => {
    await onOneFile(async (open, path) => {
      const a = await open()
      const b = await open()
      expect(await getJson(a.app, '/api/tags')).toEqual({ tags: [] })
      expect(await getJson(a.app, '/api/tags')).toEqual({ tags: [] }) // now cached
      const jake = await send(b.app, 'POST', '/api/users', {
        body: { user: { username: 'jake', email: 'j@x.io', password: 'password123' } },
      })
      const made = await send(b.app, 'POST', '/api/articles', {
        token: jake.body.user.token,
        body: { article: { title: 'Fresh', description: 'd', body: 'b', tagList: ['fresh'] } },
      })
      expect(made.status).toBe(201)
      expect(await getJson(a.app, '/api/tags')).toEqual({ tags: ['fresh'] })
      expect((await getJson(a.app, '/api/articles')).articlesCount).toBe(1)
      // the processes share a signal file beside the database (src/db/sqlite/signal.ts)
      expect(existsSync(`${path}-changes`)).toBe(true)
    })
  })

  test('a commit that did not ring the signal, or rang another file, is seen within SIGNAL_FALLBACK_MS', async () => {
    await onOneFile(async (open, path) => {
      const a = await open()
      const b = await open()
      const jake = await send(b.app, 'POST', '/api/users', {
        body: { user: { username: 'jake', email: 'j@x.io', password: 'password123' } },
      })
      const post = (title: string) =>
        send(b.app, 'POST', '/api/articles', {
          token: jake.body.user.token,
          body: { article: { title, description: 'd', body: 'b', tagList: [title] } },
        })
      /** How long `a` takes to list the tag `b` just added (its tag list cached before), and in how many reads. */
      const seenAfter = async (tag: string) => {
        const t0 = Date.now()
        let reads = 1
        while (!(await getJson(a.app, '/api/tags')).tags.includes(tag)) {
          if (Date.now() - t0 > 5 * SIGNAL_FALLBACK_MS) throw new Error(`${tag} not seen`)
          await Bun.sleep(10)
          reads++
        }
        return { ms: Date.now() - t0, reads }
      }
      for (let i = 0; i < 2; i++) await getJson(a.app, '/api/tags')
      expect((await post('rung')).status).toBe(201)
      // rung: the very next read sees it
      expect((await seenAfter('rung')).reads).toBe(1)

      // a process that died between its commit and the signal: `b` without its signal
      const signal = Reflect.get(b.store.changes, 'signalFile')
      expect(signal).toBeInstanceOf(Object)
      expect(Reflect.set(b.store.changes, 'signalFile', undefined)).toBe(true)
      await getJson(a.app, '/api/tags')
      expect((await post('silent')).status).toBe(201)
      expect((await seenAfter('silent')).ms).toBeLessThan(SIGNAL_FALLBACK_MS + 500)
      Reflect.set(b.store.changes, 'signalFile', signal)

      // the file removed while both run: a process started after maps a new one, and `a` finds it
      rmSync(`${path}-changes`)
      const c = await open()
      await getJson(a.app, '/api/tags')
      const made = await send(c.app, 'POST', '/api/articles', {
        token: jake.body.user.token,
        body: { article: { title: 'After', description: 'd', body: 'b', tagList: ['after'] } },
      })
      expect(made.status).toBe(201)
      expect((await seenAfter('after')).ms).toBeLessThan(SIGNAL_FALLBACK_MS + 500)
      // and from then on at once
      await Bun.sleep(20)
      const again = await send(c.app, 'POST', '/api/articles', {
        token: jake.body.user.token,
        body: { article: { title: 'Again', description: 'd', body: 'b', tagList: ['again'] } },
      })
      expect(again.status).toBe(201)
      expect((await seenAfter('again')).reads).toBe(1)
    })
  })
})

describe('DepCache', () => {
  // 2^15 slots of recent bumps (the default) and 4, where most keys share a slot with others
  test.each([15, 2])(
    'a value found valid again after other writes stays exact: dropped by the next bump of any of its keys, and only then (2^%i slots)',
    (slotBits) => {
      const versions = new Versions(64, slotBits) // a small map of bumped keys: forgetting (the floor) happens too
      const cache = new DepCache<number, number>(versions, 1000, 1 << 20)
      const slab = new SlabCache(versions, 1 << 16, 1000, 1 << 16)
      const random = mulberry32(11)
      const depsOf = (k: number) => [keys.article(k % 20), keys.user(k % 7)]
      // the model: when each key was set, and when each dependency was last bumped
      const setAt = new Map<number, number>()
      const bumpedAt = new Map<number, number>()
      const fresh = (k: number) => depsOf(k).every((d) => (bumpedAt.get(d) ?? -1) <= setAt.get(k)!)
      let checks = 0
      for (let i = 0; i < 30_000; i++) {
        const k = Math.floor(random() * 60)
        const r = random()
        if (r < 0.2) {
          cache.set(k, { value: i, deps: depsOf(k) }, versions.clock)
          slab.set(String(k), String(i), depsOf(k), versions.clock)
          setAt.set(k, versions.clock)
        } else if (r < 0.25) {
          const d = random() < 0.5 ? keys.article(Math.floor(random() * 40)) : keys.user(Math.floor(random() * 14))
          versions.bump([d])
          bumpedAt.set(d, versions.clock)
        } else {
          const got = cache.get(k)
          const body = slab.get(String(k))
          if (got !== undefined) {
            // whatever is returned is the last value set, and none of its keys moved since
            checks++
            expect(setAt.has(k) && fresh(k)).toBe(true)
            if (body !== undefined) expect(new TextDecoder().decode(body)).toBe(String(got))
          } else if (setAt.has(k) && fresh(k)) {
            // a fresh value may only be missing because the bounded map of bumps forgot (conservative)
            expect(versions.valid(setAt.get(k)!, depsOf(k))).toBe(false)
          }
          if (body !== undefined) expect(setAt.has(k) && fresh(k)).toBe(true)
        }
      }
      expect(checks).toBeGreaterThan(1000)
    },
  )

  test('revalidate moves a valid value to the clock, leaves an invalid one as it was', () => {
    const versions = new Versions()
    const v = { builtAt: versions.clock, deps: [keys.article(1)] }
    versions.bump([keys.article(2)])
    expect(versions.revalidate(v)).toBe(true)
    expect(v.builtAt).toBe(versions.clock)
    versions.bump([keys.article(1)])
    const before = v.builtAt
    expect(versions.revalidate(v)).toBe(false)
    expect(v.builtAt).toBe(before)
  })

  test('drops exactly the values whose dependencies changed', () => {
    const versions = new Versions()
    const cache = new DepCache<string, string>(versions, 100, 1 << 20)
    cache.set('x', { value: 'one', deps: [keys.article(1)] }, versions.clock)
    cache.set('y', { value: 'two', deps: [keys.article(2), keys.user(1)] }, versions.clock)
    versions.bump([keys.article(1)])
    expect(cache.get('x')).toBeUndefined()
    expect(cache.get('y')).toBe('two')
    versions.bump([keys.user(1)])
    expect(cache.get('y')).toBeUndefined()
  })

  test('never keeps a value whose build overlapped a change to what it read', () => {
    const versions = new Versions()
    const cache = new DepCache<string, string>(versions, 100, 1 << 20)
    const startedAt = versions.clock
    versions.bump([keys.article(1)]) // a write commits while the value is being built
    cache.set('x', { value: 'stale', deps: [keys.article(1)] }, startedAt)
    expect(cache.get('x')).toBeUndefined()
    cache.set('y', { value: 'fine', deps: [keys.article(2)] }, startedAt)
    expect(cache.get('y')).toBe('fine')
  })

  test('a change of everything drops everything', () => {
    const versions = new Versions()
    const cache = new DepCache<string, string>(versions, 100, 1 << 20)
    cache.set('x', { value: 'one', deps: [keys.article(1)] }, versions.clock)
    versions.bumpAll()
    expect(cache.get('x')).toBeUndefined()
  })

  test('forgetting old bumps (bounded memory) never makes a stale value valid', () => {
    const versions = new Versions(10)
    const cache = new DepCache<string, string>(versions, 100, 1 << 20)
    cache.set('x', { value: 'one', deps: [keys.article(100)] }, versions.clock)
    versions.bump([keys.article(100)])
    for (let i = 1; i <= 30; i++) versions.bump([keys.article(100 + i)])
    expect(cache.get('x')).toBeUndefined()
  })

  test('keeps within its byte budget, keys included, dropping the oldest first', () => {
    const versions = new Versions()
    const cache = new DepCache<string, string>(versions, 100, 400)
    cache.set('a', { value: 'x'.repeat(40), deps: [] }, versions.clock)
    cache.set('b', { value: 'y'.repeat(40), deps: [] }, versions.clock)
    expect(cache.get('a')).toBe('x'.repeat(40))
    cache.set('c', { value: 'z'.repeat(40), deps: [] }, versions.clock)
    expect(cache.weight).toBeLessThanOrEqual(400)
    expect(cache.get('c')).toBe('z'.repeat(40))
    // a long key costs what it weighs: it does not fit at all
    cache.set('k'.repeat(1000), { value: 'v', deps: [] }, versions.clock)
    expect(cache.get('k'.repeat(1000))).toBeUndefined()
    expect(cache.weight).toBeLessThanOrEqual(400)
  })

  test('keeps within its entry budget', () => {
    const versions = new Versions()
    const cache = new DepCache<number, number>(versions, 2, 1 << 20)
    for (const k of [1, 2, 3]) cache.set(k, { value: k * 10, deps: [] }, versions.clock)
    expect([cache.get(1), cache.get(2), cache.get(3)]).toEqual([undefined, 20, 30])
  })

  test('evicts in the order of a Map kept in recency order: oldest first, a read in the older half moving to the young end', () => {
    // the reference: the order kept by the Map itself (delete and set again to move), as the
    // cache did before it kept a queue of its own; the same operations must keep the same entries
    const versions = new Versions()
    const maxEntries = 40
    const maxBytes = 4096
    const cache = new DepCache<number, string>(versions, maxEntries, maxBytes)
    const model = new Map<number, { value: string; seq: number; size: number }>()
    let seq = 0
    let bytes = 0
    const random = mulberry32(23)
    for (let op = 0; op < 20_000; op++) {
      const key = Math.floor(random() * random() * 120)
      if (random() < 0.6) {
        const e = model.get(key)
        if (e !== undefined && seq - e.seq > model.size >> 1) {
          model.delete(key)
          e.seq = ++seq
          model.set(key, e)
        }
        expect(cache.get(key)).toBe(e?.value)
      } else {
        const value = 'v'.repeat(Math.floor(random() * 60))
        cache.set(key, { value, deps: [] }, versions.clock)
        const size = value.length * 2 + entryOverhead(key, [])
        const old = model.get(key)
        if (old) {
          model.delete(key)
          bytes -= old.size
        }
        while (model.size >= maxEntries || bytes + size > maxBytes) {
          const [k, e] = model.entries().next().value!
          model.delete(k)
          bytes -= e.size
        }
        model.set(key, { value, seq: ++seq, size })
        bytes += size
      }
      expect(cache.size).toBe(model.size)
      expect(cache.weight).toBe(bytes)
    }
    expect(cache.hits).toBeGreaterThan(1000)
  })
})

describe('SlabCache', () => {
  test('returns exactly what was kept, across many wraps of the ring, or nothing', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 4096, 1000, 16_384)
    const model = new Map<string, string>()
    const random = mulberry32(42)
    for (let i = 0; i < 20_000; i++) {
      const n = Math.floor(random() * 300)
      const key = `k${n}${'q'.repeat((n % 7) * 100)}`
      if (random() < 0.6) {
        const value = `${i}:${'é😀x'.repeat(Math.floor(random() * 60))}`
        slab.set(key, value, [keys.article(i % 50)], versions.clock)
        model.set(key, value)
      } else {
        const got = slab.get(key)
        // a body is either the last one kept under its key, or gone (written over, or its key bumped)
        if (got !== undefined) expect(new TextDecoder().decode(got)).toBe(model.get(key)!)
      }
      if (random() < 0.01) versions.bump([keys.article(Math.floor(random() * 50))])
      if (slab.weight > slab.budget) throw new Error(`weight ${slab.weight} over budget ${slab.budget} after ${i} steps`)
    }
    expect(slab.size).toBeGreaterThan(0)
  })

  test('keeps pieces as the bytes of their join, across many wraps, and returns what it kept', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 8192, 1000, 16_384)
    const model = new Map<string, string>()
    const random = mulberry32(7)
    const decode = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b))
    const numbers = [0, 7, 9, 10, 99, 100, 12345, 2 ** 53 - 1, -3, 1.5]
    for (let i = 0; i < 5_000; i++) {
      const key = `k${Math.floor(random() * 200)}`
      if (random() < 0.6) {
        const pieces: (string | number)[] = []
        for (let n = Math.floor(random() * 12); n > 0; n--) {
          const r = random()
          pieces.push(
            r < 0.3
              ? numbers[Math.floor(random() * numbers.length)]!
              : r < 0.6
                ? 'a"b\\c'.repeat(Math.floor(random() * 20))
                : 'é😀ü\n'.repeat(Math.floor(random() * 10)),
          )
        }
        const kept = slab.set(key, pieces, [keys.article(i % 50)], versions.clock)
        const joined = pieces.join('')
        // an empty body is not kept (what the key held stays as it was)
        expect(decode(kept)).toBe(joined === '' ? undefined : joined)
        if (joined !== '') model.set(key, joined)
      } else {
        const got = decode(slab.get(key))
        if (got !== undefined) expect(got).toBe(model.get(key)!)
      }
      if (random() < 0.01) versions.bump([keys.article(Math.floor(random() * 50))])
    }
    expect(slab.size).toBeGreaterThan(0)
  })

  test('pieces whose largest possible size is over the limit are kept as their join when that fits', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 4000, 100, 4096)
    // 600 characters: up to 1,800 bytes, over a quarter of the slab; 600 bytes in fact
    const kept = slab.set('a', ['x'.repeat(300), 42, 'y'.repeat(300)], [], versions.clock)
    expect(new TextDecoder().decode(kept)).toBe(`${'x'.repeat(300)}42${'y'.repeat(300)}`)
    expect(new TextDecoder().decode(slab.get('a'))).toBe(`${'x'.repeat(300)}42${'y'.repeat(300)}`)
    // really over it: not kept
    expect(slab.set('b', ['é'.repeat(600)], [], versions.clock)).toBeUndefined()
    expect(slab.get('b')).toBeUndefined()
  })

  test('pieces near the end of the buffer take their exact size, not their bound: the lap does not start early', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 4000, 100, 64 * 1024)
    const body = (i: number) => [`${String(i).padStart(3, '0')}:`, 'x'.repeat(296)] // 300 bytes, bound 900
    for (let i = 0; i < 13; i++) expect(slab.set(`k${i}`, body(i), [], versions.clock)?.byteLength).toBe(300)
    // 13 x 300 = 3,900 bytes fit in 4,000: the first body is still there
    expect(new TextDecoder().decode(slab.get('k0'))).toBe(body(0).join(''))
    expect(new TextDecoder().decode(slab.get('k12'))).toBe(body(12).join(''))
    slab.set('k13', body(13), [], versions.clock)
    expect(slab.get('k0')).toBeUndefined()
    expect(new TextDecoder().decode(slab.get('k13'))).toBe(body(13).join(''))
  })

  test('an empty body is not kept, even with the buffer exactly full, and later bodies stay exact', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 400, 100, 64 * 1024)
    const body = (k: string) => k.repeat(100)
    for (const k of 'abcd') slab.set(k, body(k), [], versions.clock)
    expect(slab.set('z', '', [], versions.clock)).toBeUndefined()
    expect(slab.set('y', ['', ''], [], versions.clock)).toBeUndefined()
    for (const k of 'efghijkl') {
      slab.set(k, body(k), [], versions.clock)
      for (const other of 'abcdefghijkl') {
        const got = slab.get(other)
        if (got !== undefined) expect(new TextDecoder().decode(got)).toBe(body(other))
      }
    }
    expect(new TextDecoder().decode(slab.get('l'))).toBe(body('l'))
  })

  test('a Response made from a body keeps its bytes when the slab is written over right after (Bun copies them)', async () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 4000, 100, 4096)
    slab.set('a', 'x'.repeat(400), [], versions.clock)
    const body = slab.get('a')!
    expect(body.byteLength).toBe(400)
    const response = new Response(body)
    // the next lap writes over the same bytes
    for (let i = 0; i < 5; i++) slab.set(`b${i}`, 'y'.repeat(900), [], versions.clock)
    expect(new TextDecoder().decode(body)).not.toBe('x'.repeat(400))
    expect(slab.get('a')).toBeUndefined()
    expect(await response.text()).toBe('x'.repeat(400))
  })

  test('drops a body whose dependencies changed, and one that overlaps a newer body', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 1000, 100, 4096)
    slab.set('a', 'x'.repeat(200), [keys.article(1)], versions.clock)
    slab.set('b', 'y'.repeat(200), [keys.article(2)], versions.clock)
    versions.bump([keys.article(1)])
    expect(slab.get('a')).toBeUndefined()
    expect(new TextDecoder().decode(slab.get('b')!)).toBe('y'.repeat(200))
    for (let i = 0; i < 5; i++) slab.set(`c${i}`, 'z'.repeat(200), [], versions.clock)
    expect(slab.get('b')).toBeUndefined() // written over by the next lap
    expect(new TextDecoder().decode(slab.get('c4')!)).toBe('z'.repeat(200))
  })

  test('counts keys against a byte bound of their own: long ones push out the oldest, one too long is not kept', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 1 << 20, 1000, 4096)
    const key = (i: number) => `${i}${'k'.repeat(450)}` // 966 bytes each with the slot: four fit in 4,096
    for (let i = 0; i < 10; i++) slab.set(key(i), 'v', [], versions.clock)
    expect(slab.size).toBe(4)
    expect([6, 7, 8, 9].map((i) => slab.get(key(i)) !== undefined)).toEqual([true, true, true, true])
    expect(slab.get(key(5))).toBeUndefined()
    expect(slab.weight).toBeLessThanOrEqual(slab.budget)
    // a key over a quarter of the bound is not kept, and pushes nothing out
    slab.set('x'.repeat(600), 'v', [], versions.clock)
    expect(slab.get('x'.repeat(600))).toBeUndefined()
    expect(slab.size).toBe(4)
  })

  test('a key replaced or found invalid still counts until the ring lets go of it', () => {
    const versions = new Versions()
    const slab = new SlabCache(versions, 1 << 20, 1000, 4096)
    for (let i = 0; i < 50; i++) {
      // a new string each time, as each request builds its own
      slab.set(`/api/articles?tag=${'t'.repeat(400)}${i % 2}`, `${i}`, [keys.article(1)], versions.clock)
      if (i % 5 === 0) versions.bump([keys.article(1)])
      expect(slab.weight).toBeLessThanOrEqual(slab.budget)
    }
    expect(new TextDecoder().decode(slab.get(`/api/articles?tag=${'t'.repeat(400)}1`)!)).toBe('49')
  })
})

describe('ResponseCache', () => {
  test('keeps answers only for URLs whose parameters the route knows', async () => {
    const caches = createCaches(new Versions())
    const cache = new ResponseCache(caches, [])
    let builds = 0
    const build = async () => ({ value: `{"n":${++builds}}`, deps: [] })
    // the route's query reader says whether every parameter is one the route declares
    const read = queryReader(t.Object({ limit: t.Optional(t.String()) }))
    const body = async (url: string) => {
      const q = read(searchOf(url))
      if (!q.ok) throw new Error('not a valid query')
      const b = await cache.body(null, url, q.known, build)
      return typeof b === 'string' ? b : new TextDecoder().decode(b)
    }
    expect(await body('http://l/api/articles?limit=5')).toBe('{"n":1}')
    expect(await body('http://l/api/articles?limit=5')).toBe('{"n":1}') // kept
    expect(await body('http://l/api/articles?limit=5&junk=1')).toBe('{"n":2}')
    expect(await body('http://l/api/articles?limit=5&junk=1')).toBe('{"n":3}') // never kept
    expect(cache.peek(0, '/api/articles?limit=5&junk=1')).toBeUndefined()
    expect(await body('http://l/api/articles')).toBe('{"n":4}')
    expect(await body('http://l/api/articles')).toBe('{"n":4}')
    // the Host header names no different content
    expect(await body('http://other.host/api/articles')).toBe('{"n":4}')
  })

  test("a signed-in viewer's answer is kept for that viewer only, and dropped when their relations change", async () => {
    const versions = new Versions()
    const cache = new ResponseCache(createCaches(versions), [])
    let builds = 0
    const build = async (viewer: number) => ({ value: `{"v":${viewer},"n":${++builds}}`, deps: [keys.viewer(viewer)] })
    const body = async (viewer: number, url: string) => {
      const b = await cache.body(viewer ? { id: viewer } : null, url, true, build)
      return typeof b === 'string' ? b : new TextDecoder().decode(b)
    }
    expect(await body(7, 'http://l/api/articles/a')).toBe('{"v":7,"n":1}')
    expect(await body(7, 'http://l/api/articles/a')).toBe('{"v":7,"n":1}') // kept for viewer 7
    expect(await body(8, 'http://l/api/articles/a')).toBe('{"v":8,"n":2}') // not served to viewer 8
    expect(await body(0, 'http://l/api/articles/a')).toBe('{"v":0,"n":3}') // nor to anonymous readers
    versions.bump([keys.viewer(7)]) // viewer 7 followed or favorited something
    expect(await body(7, 'http://l/api/articles/a')).toBe('{"v":7,"n":4}')
    expect(await body(8, 'http://l/api/articles/a')).toBe('{"v":8,"n":2}') // viewer 8's is still valid
  })

  test('a viewer whose flags show nowhere in an answer shares the anonymous one; never an answer built while their relations changed', async () => {
    const versions = new Versions()
    const caches = createCaches(versions)
    const cache = new ResponseCache(caches, [])
    const flags = (followees: number[]) =>
      caches.viewers.set(7, { value: { followees: new Set(followees), favorites: new Set() }, deps: [keys.viewer(7)] }, versions.clock)
    const text = (b: Uint8Array | string | undefined) => (b === undefined || typeof b === 'string' ? b : new TextDecoder().decode(b))
    const url = 'http://l/api/profiles/five'
    flags([])
    // viewer 7 follows nobody: their answer is kept as everyone's
    await cache.body({ id: 7 }, url, true, async () => ({ value: '{"following":false}', deps: [keys.user(5), keys.viewer(7)] }))
    expect(text(cache.peek(0, pathAndQuery(url)))).toBe('{"following":false}')
    expect(caches.viewerResponses.size).toBe(0)
    versions.bump([keys.user(5)])
    // a build that saw viewer 7 follow user 5, while they unfollowed (their relations were bumped mid-build)
    flags([5])
    await cache.body({ id: 7 }, url, true, async () => {
      versions.bump([keys.viewer(7)])
      flags([])
      return { value: '{"following":true}', deps: [keys.user(5), keys.viewer(7)] }
    })
    expect(cache.peek(0, pathAndQuery(url))).toBeUndefined()
    expect(cache.peek(7, pathAndQuery(url))).toBeUndefined()
    // viewer 7 follows user 5 now: not served the anonymous answer
    await cache.body(null, url, true, async () => ({ value: '{"following":false}', deps: [keys.user(5)] }))
    flags([5])
    expect(cache.peek(7, pathAndQuery(url))).toBeUndefined()
    flags([])
    expect(text(cache.peek(7, pathAndQuery(url)))).toBe('{"following":false}')
  })
})

describe('cache budgets', () => {
  /** Every cache an app makes: the central ones and each feature's part, as the budgets bound them. */
  const budgets = (scale: number) => {
    const caches = createCaches(new Versions(), scale)
    for (const name of Object.keys(BUDGETS)) if (!caches.all().some(([n]) => n === name)) caches.part(name as PartName)
    let total = 0
    for (const [, c] of caches.all()) total += c.budget
    return total / (1024 * 1024)
  }
  test('an app makes every cache the budgets name, no other', async () => {
    const app = await testApp()
    expect(
      app.app.caches
        .all()
        .map(([name]) => name)
        .sort(),
    ).toEqual(Object.keys(BUDGETS).sort())
  })

  test('add up to CACHE_BUDGET_MB, and CACHE_MB scales them', () => {
    expect(Object.keys(BUDGETS).length).toBe(12)
    expect(Math.round(budgets(1))).toBe(CACHE_BUDGET_MB)
    expect(Math.round(budgets(0.5))).toBe(CACHE_BUDGET_MB / 2)
    expect(Math.round(budgets(2))).toBe(CACHE_BUDGET_MB * 2)
  })
})

describe('reads under way (src/cache/flights.ts)', () => {
  test('requests missing the same value at once share one read while nothing it depends on changed', async () => {
    const versions = new Versions()
    const flights = new Flights<string, string>(versions)
    const first = Promise.withResolvers<string>()
    let reads = 0
    const read = () => {
      reads++
      return first.promise
    }
    const a = flights.share('k', [keys.tags], read)
    versions.bump([keys.article(1)]) // something else changed: the read under way is still good
    const b = flights.share('k', [keys.tags], read)
    expect(reads).toBe(1)
    first.resolve('v1')
    expect(await Promise.all([a, b])).toEqual(['v1', 'v1'])
    expect(flights.size).toBe(0)
    // settled: the next miss reads again
    flights.share('k', [keys.tags], async () => 'v2')
    expect(await flights.share('k', [keys.tags], read)).toBe('v2')
  })

  test('a request that arrives after a change to what the read under way depends on reads anew', async () => {
    const versions = new Versions()
    const flights = new Flights<string, string>(versions)
    const old = Promise.withResolvers<string>()
    const before = flights.share('k', [keys.tags], () => old.promise)
    versions.bump([keys.tags])
    const after = flights.share('k', [keys.tags], async () => 'new')
    // and a third request joins the newer read, not the older one
    const third = flights.share('k', [keys.tags], async () => 'third')
    old.resolve('old')
    expect(await before).toBe('old')
    expect(await after).toBe('new')
    expect(await third).toBe('new')
    expect(flights.size).toBe(0)
  })

  test('a failed read fails those who joined it, and the next request reads again', async () => {
    const versions = new Versions()
    const flights = new Flights<string, string>(versions)
    const failing = Promise.withResolvers<string>()
    const a = flights.share('k', [], () => failing.promise)
    const b = flights.share('k', [], async () => 'unused')
    failing.reject(new Error('down'))
    await expect(a).rejects.toThrow('down')
    await expect(b).rejects.toThrow('down')
    expect(await flights.share('k', [], async () => 'back')).toBe('back')
  })

  /**
   * Through the app: readers keep the tag list and the first page busy
   * (reads under way almost all the time, on PostgreSQL), while a writer
   * creates articles; each answer the writer gets after its creation shows it.
   */
  test('a request sent after a new article is acknowledged never gets a tag list or page read before it', async () => {
    const app = await conduitApp()
    const [author] = await registerUsers(app, 1)
    // a long tag list, so that each read of it takes longer than a write (tags in use straight in: no
    // article needed for this); SQLite reads synchronously, so a read is never under way there
    await app.db.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${onPostgres ? 50_000 : 2_000}) INSERT INTO tags (name, articles_count) SELECT 'bulk' || i, 1 FROM n`,
    )
    let stop = false
    const readers = Array.from({ length: 8 }, async (_, i) => {
      let n = 0
      while (!stop) {
        const res = await app.request('GET', i % 4 ? '/api/tags' : '/api/articles?limit=5')
        expect(res.status).toBe(200)
        n++
      }
      return n
    })
    try {
      for (let round = 0; round < 15; round++) {
        const tag = `fresh${round}`
        const created = await createArticle(app, author!.token, { tagList: [tag] })
        const [tags, list] = await Promise.all([app.request('GET', '/api/tags'), app.request('GET', '/api/articles?limit=5')])
        expect({ round, hasTag: (tags.body.tags as string[]).includes(tag) }).toEqual({ round, hasTag: true })
        expect({ round, first: list.body.articles[0].slug }).toEqual({ round, first: created.slug })
      }
    } finally {
      stop = true
      // the readers end before the app is closed, whatever happened above
      await Promise.allSettled(readers)
    }
    for (const n of await Promise.all(readers)) expect(n).toBeGreaterThan(0)
  }, 60_000)

  /**
   * A feed's ids depend on the authors the viewer follows, read just before
   * the page. A follow committed between the two reads must not leave a page
   * kept with the follows from before it (it would miss the new author's next
   * articles). The viewer's follows are held after they are read (the
   * profiles' read, then a wait) while the follow commits.
   */
  test('a feed read across a follow is not kept with the follows read before it', async () => {
    const db = await testDatabase()
    let gate: Promise<void> | undefined
    const app = await createApp({ store: db.store, config: testConfig() })
    // the viewer's flags (their follows) are read, then held while the gate is up
    const reads = app.features.profiles.reads
    const flags = reads.flags
    reads.flags = async (viewer: number) => {
      const f = await flags(viewer)
      const wait = gate
      gate = undefined
      if (wait) await wait
      return f
    }
    const t = {
      app,
      request: (method: string, path: string, o?: Parameters<TestApp['request']>[2]) => send(app, method, path, o),
    } as TestApp
    const [reader, author] = await registerUsers(t, 2)
    await createArticle(t, author!.token)
    let release!: () => void
    gate = new Promise((resolve) => (release = resolve))
    const feed = t.request('GET', '/api/articles/feed', { token: reader!.token })
    await Bun.sleep(50) // the follows are read (nobody followed yet) and held
    await follow(t, reader!.token, author!.username)
    release()
    expect((await feed).status).toBe(200)
    const next = await createArticle(t, author!.token)
    const res = await t.request('GET', '/api/articles/feed', { token: reader!.token })
    expect(res.body.articles[0]?.slug).toBe(next.slug)
    expect(res.body.articlesCount).toBe(2)
  })

  /**
   * The same under favorites and comments: readers keep the first page, the
   * newest article and its comments busy while writers create an article,
   * favorite it and comment on it; each answer a writer gets after a write
   * shows that write.
   */
  test('under concurrent readers, a favorite and a comment show in the next answers of the pages, article and comments they change', async () => {
    const app = await conduitApp()
    const [author, fan] = await registerUsers(app, 2)
    let newest = (await createArticle(app, author!.token)).slug
    let stop = false
    const paths = [() => '/api/articles?limit=5', () => `/api/articles/${newest}`, () => `/api/articles/${newest}/comments`]
    const readers = Array.from({ length: 9 }, async (_, i) => {
      let n = 0
      while (!stop) {
        const res = await app.request('GET', paths[i % paths.length]!())
        expect(res.status).toBe(200)
        // on SQLite an answer may need no I/O at all: now and then, let timers run
        if (++n % 50 === 0) await Bun.sleep(0)
      }
      return n
    })
    try {
      for (let round = 0; round < 30; round++) {
        const created = await createArticle(app, author!.token)
        newest = created.slug
        // let the readers miss the new article's parts, then change them
        await Bun.sleep(2)
        await favorite(app, fan!.token, created.slug)
        const [page, article] = await Promise.all([
          app.request('GET', '/api/articles?limit=5'),
          app.request('GET', `/api/articles/${created.slug}`),
        ])
        expect({ round, first: page.body.articles[0].slug, count: page.body.articles[0].favoritesCount }).toEqual({
          round,
          first: created.slug,
          count: 1,
        })
        expect({ round, count: article.body.article.favoritesCount }).toEqual({ round, count: 1 })
        await addComment(app, fan!.token, created.slug, `comment ${round}`)
        const comments = await app.request('GET', `/api/articles/${created.slug}/comments`)
        expect({ round, bodies: comments.body.comments.map((c: { body: string }) => c.body) }).toEqual({
          round,
          bodies: [`comment ${round}`],
        })
      }
    } finally {
      stop = true
      // the readers end before the app is closed, whatever happened above
      await Promise.allSettled(readers)
    }
    for (const n of await Promise.all(readers)) expect(n).toBeGreaterThan(0)
  }, 60_000)
})
