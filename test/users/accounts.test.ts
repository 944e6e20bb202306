import { describe, expect, test } from 'bun:test'
import { lockWaiters, sessionBeside } from '../support/backend.ts'
import { skipIf, why } from '../support/skip.ts'
import { ADMIN } from '../../src/auth/actor.ts'
import { fromLog } from '../../src/keys/keys.ts'
import { EVERYTHING } from '../../src/keys/versions.ts'
import { accountSearch } from '../../src/users/accounts.ts'
import { AccountHasContent, DELETE_BATCH } from '../../src/users/writes.ts'
import { storageViolations } from '../reliability/invariants.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { addComment, conduitApp, favorite, follow } from '../support/conduit.ts'
import { createArticle, expectTokenRefused, type RegisteredUser, registerUser } from '../support/fixtures.ts'
import { commentsOn } from '../../src/comments/index.ts'
import { usersOn } from '../../src/users/index.ts'
import { articlesOn } from '../../src/articles/index.ts'
import { profilesOn } from '../../src/profiles/index.ts'

/**
 * The operator's writes to accounts (src/users/writes.ts, with the ADMIN
 * actor: `conduit admin users ...`) and the comment deletion by id, on the
 * backend under test, seen through the API: what a locked account, a reset
 * password and a deleted account look like to clients.
 */

/** A write that throws at once on SQLite and rejects on PostgreSQL, as a promise either way. */
const attempt = <T>(f: () => T | Promise<T>): Promise<T> => Promise.resolve().then(f)

const login = (app: TestApp, u: { email: string }, password: string) =>
  app.request('POST', '/api/users/login', { body: { user: { email: u.email, password } } })
const me = (app: TestApp, token: string) => app.request('GET', '/api/user', { token })

/** The user as a write's actor (a Viewer), read back from the database. */
const writer = async (app: TestApp, u: RegisteredUser) => {
  const row = await app.db.get<{ id: number; username: string; username_key: string }>(
    'SELECT id, username, username_key FROM users WHERE email = ?',
    u.email,
  )
  return { id: Number(row!.id), username: row!.username, usernameKey: row!.username_key }
}

describe('locking an account', () => {
  test('its right password answers 403 "account is locked"; a wrong one 401 as for anyone; its content stays readable', async () => {
    const app = await conduitApp()
    const [jake, reader] = [await registerUser(app), await registerUser(app)]
    const { slug } = await createArticle(app, jake.token)
    const result = await usersOn(app.store).writes.setLocked(ADMIN, jake.username.toUpperCase(), true)
    expect(result).toMatchObject({ username: jake.username, changed: true })

    const right = await login(app, jake, jake.password)
    expect(right.status).toBe(403)
    expect(right.body).toEqual({ errors: { account: ['is locked'] } })
    const wrong = await login(app, jake, 'not the password')
    const unknown = await login(app, { email: 'nobody@example.com' }, 'not the password')
    expect([wrong.status, wrong.text]).toEqual([401, unknown.text])

    expect((await me(app, jake.token)).status).toBe(401)
    expect((await app.request('GET', `/api/articles/${slug}`, { token: reader.token })).body.article.author.username).toBe(jake.username)
    expect((await app.request('GET', `/api/profiles/${jake.username}`)).status).toBe(200)
  })

  test('refuses the tokens verified and cached before it, at once', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    await app.request('POST', `/api/articles/${slug}/favorite`, { token: jake.token })
    for (let i = 0; i < 3; i++) {
      expect((await me(app, jake.token)).status).toBe(200)
      expect((await app.request('GET', '/api/articles', { token: jake.token })).body.articles[0].favorited).toBe(true)
    }
    await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)
    await expectTokenRefused(app, `Token ${jake.token}`, ['/api/articles', `/api/articles/${slug}`])
  })

  test('unlocking lets the account log in again; tokens from before the lock stay refused', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)
    expect(await usersOn(app.store).writes.setLocked(ADMIN, jake.username, false)).toMatchObject({ changed: true })
    const again = await login(app, jake, jake.password)
    expect(again.status).toBe(200)
    expect((await me(app, jake.token)).status).toBe(401)
    expect((await me(app, again.body.user.token)).status).toBe(200)
  })

  test('twice changes nothing the second time (no change recorded); unlocking an unlocked account neither', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)
    const version = await app.db.count('SELECT token_version FROM users WHERE email = ?', jake.email)
    const seq = await app.db.count('SELECT coalesce(max(seq), 0) FROM changes')
    expect(await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)).toMatchObject({ changed: false })
    await usersOn(app.store).writes.setLocked(ADMIN, jake.username, false)
    expect(await usersOn(app.store).writes.setLocked(ADMIN, jake.username, false)).toMatchObject({ changed: false })
    expect(await app.db.count('SELECT token_version FROM users WHERE email = ?', jake.email)).toBe(version)
    // only the unlock was recorded
    expect(await app.db.count('SELECT count(*) FROM changes WHERE seq > ?', seq)).toBe(1)
  })
})

/**
 * A request's token is checked when it arrives; its write commits later (after
 * a password hash, or a wait for a lock). A lock, a reset or another password
 * change committed in between ends that token: the write is refused as it
 * would be a moment later (401), and changes nothing.
 */
describe('writes whose token ended between its check and their commit', () => {
  /** The viewer the request's token check makes, before the change that ends its token. */
  const checkedViewer = async (app: TestApp, token: string) => (await app.app.features.users.tokens.authenticate(`Token ${token}`))!
  /** The operator's change lands while the password is being hashed: argon2 at a cost that takes a while. */
  const SLOW_HASH = { passwordHash: { memoryCost: 65_536, timeCost: 3 } }
  // ten such hashes take 3 s on an idle machine, over 5 s (the default limit) beside CI's other pass
  const SLOW_HASH_TIMEOUT_MS = 30_000
  const statusOf = (p: Promise<unknown>) =>
    p.then(
      () => 'written',
      (e: { status?: number }) => e.status,
    )

  test('every kind of write by a token the lock ended answers 401 and changes nothing', async () => {
    const app = await conduitApp()
    const [jake, other] = [await registerUser(app), await registerUser(app)]
    const own = await createArticle(app, jake.token)
    const theirs = await createArticle(app, other.token)
    const comment = await addComment(app, jake.token, theirs.slug, 'before the lock')
    const viewer = await checkedViewer(app, jake.token)
    const otherId = (await writer(app, other)).id
    await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)
    const state = () =>
      app.db.all(
        `SELECT (SELECT count(*) FROM articles) AS articles, (SELECT count(*) FROM comments) AS comments,
                (SELECT count(*) FROM favorites) AS favorites, (SELECT count(*) FROM follows) AS follows,
                (SELECT body FROM articles WHERE slug = ?) AS body, (SELECT bio FROM users WHERE id = ?) AS bio`,
        own.slug,
        viewer.id,
      )
    const before = await state()
    const articles = articlesOn(app.store).writes
    const comments = commentsOn(app.store).writes
    const writes: Record<string, () => unknown> = {
      create: () => articles.create(viewer, { title: 'After the lock', description: 'd', body: 'b' }),
      update: () => articles.update(viewer, own.slug, { body: 'changed after the lock' }),
      delete: () => articles.delete(viewer, own.slug),
      favorite: () => articles.setFavorite(viewer, theirs.slug, true),
      comment: () => comments.add(viewer.id, theirs.slug, 'after the lock', viewer),
      uncomment: () => comments.delete(viewer, theirs.slug, comment.id),
      follow: () => profilesOn(app.store).writes.setFollowing(viewer.id, otherId, true, viewer),
      settings: () => usersOn(app.store).writes.update(viewer.id, { bio: 'after the lock' }, viewer),
    }
    const answers: Record<string, unknown> = {}
    for (const [what, write] of Object.entries(writes)) answers[what] = await statusOf(attempt(write))
    expect(answers).toEqual(Object.fromEntries(Object.keys(writes).map((k) => [k, 401])))
    expect(await state()).toEqual(before)
  })

  test(
    'a password change under way when the account is locked: 401, and every token of it stays refused',
    async () => {
      const app = await testApp(SLOW_HASH)
      const jake = await registerUser(app)
      const changing = app.request('PUT', '/api/user', { token: jake.token, body: { user: { password: 'changed-while-locked' } } })
      await Bun.sleep(10) // past its token check: hashing
      await usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)
      const answer = await changing
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 401, body: { errors: { token: ['is invalid'] } } })
      expect((await me(app, jake.token)).status).toBe(401)
      expect((await login(app, jake, 'changed-while-locked')).status).toBe(401)
    },
    SLOW_HASH_TIMEOUT_MS,
  )

  test(
    'a password change under way when the operator resets it: the operator’s password stands, the session ends',
    async () => {
      const app = await testApp(SLOW_HASH)
      const jake = await registerUser(app)
      const changing = app.request('PUT', '/api/user', { token: jake.token, body: { user: { password: 'the-users-own-new' } } })
      await Bun.sleep(10)
      const hash = await Bun.password.hash('the-operators-new', { algorithm: 'argon2id', memoryCost: 256, timeCost: 1 })
      await usersOn(app.store).writes.setPassword(ADMIN, jake.username, hash)
      expect((await changing).status).toBe(401)
      expect((await login(app, jake, 'the-operators-new')).status).toBe(200)
      expect((await login(app, jake, 'the-users-own-new')).status).toBe(401)
      expect((await me(app, jake.token)).status).toBe(401)
    },
    SLOW_HASH_TIMEOUT_MS,
  )

  test(
    'sessions changing the password at once: one change is made; the others, whose tokens it ended, answer 401',
    async () => {
      const app = await testApp(SLOW_HASH)
      const jake = await registerUser(app)
      const sessions = [jake.token]
      for (let i = 0; i < 4; i++) sessions.push((await login(app, jake, jake.password)).body.user.token)
      const answers = await Promise.all(
        sessions.map((token, i) => app.request('PUT', '/api/user', { token, body: { user: { password: `session-${i}-password` } } })),
      )
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401])
      const won = answers.findIndex((a) => a.status === 200)
      expect((await login(app, jake, `session-${won}-password`)).status).toBe(200)
      // the token that made the change and the one its answer carries work; every other session ended
      expect((await me(app, answers[won]!.body.user.token)).status).toBe(200)
      for (const [i, token] of sessions.entries())
        expect({ i, status: (await me(app, token)).status }).toEqual({ i, status: i === won ? 200 : 401 })
    },
    SLOW_HASH_TIMEOUT_MS,
  )
})

// PostgreSQL runs writes concurrently: a write may have begun when the lock is made, and others begin while it waits
// (a row lock shared by writes lets new ones join while the lock waits: two writes always in flight held it off)
skipIf(why.postgresOnly).test(
  'a lock made while a write of the account waits returns once that write has committed; writes begun meanwhile wait behind the lock (PostgreSQL)',
  async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { tagList: ['held'] })
    const { slug } = await createArticle(app, jake.token)
    const holder = await sessionBeside(app.db)
    const order: string[] = []
    const settled = (what: string) => (r: { status: number }) => {
      order.push(what)
      return r.status
    }
    let creating: Promise<number> | undefined
    let locking: Promise<unknown> | undefined
    let favoriting: Promise<number> | undefined
    const waiting = () => lockWaiters(app.db)
    try {
      await holder.begin(async (tx) => {
        // the tag's row held: a creation tagged with it waits for it, inside its transaction, its token checked
        await tx`SELECT 1 FROM tags WHERE name = 'held' FOR UPDATE`
        creating = app
          .request('POST', '/api/articles', {
            token: jake.token,
            body: { article: { title: 'Waiting', description: 'd', body: 'b', tagList: ['held'] } },
          })
          .then(settled('created'))
        for (let i = 0; i < 200 && (await waiting()) < 1; i++) await Bun.sleep(25)
        locking = Promise.resolve(usersOn(app.store).writes.setLocked(ADMIN, jake.username, true)).then(() => order.push('locked'))
        for (let i = 0; i < 200 && (await waiting()) < 2; i++) await Bun.sleep(25)
        // the lock waits for the creation, which waits for the tag; a second write must not go ahead of the lock
        favoriting = app.request('POST', `/api/articles/${slug}/favorite`, { token: jake.token }).then(settled('favorited'))
        for (let i = 0; i < 200 && order.length === 0 && (await waiting()) < 3; i++) await Bun.sleep(25)
        expect({ order, waiting: await waiting() }).toEqual({ order: [], waiting: 3 })
      })
    } finally {
      await holder.close()
    }
    expect(await creating).toBe(201)
    await locking
    // the lock came before the second write's check: its token no longer holds, and nothing was written
    expect(await favoriting).toBe(401)
    expect(order).toEqual(['created', 'locked', 'favorited'])
    expect(await app.db.count('SELECT count(*) FROM favorites')).toBe(0)
    expect((await me(app, jake.token)).status).toBe(401)
  },
)

// PostgreSQL: other writes take tag rows in name order; a deletion taking them in another order deadlocked with them
skipIf(why.postgresOnly).test(
  'deleting an author with content takes the tags of its articles in name order, as creations do (PostgreSQL)',
  async () => {
    const app = await conduitApp()
    const [jake, other] = [await registerUser(app), await registerUser(app)]
    const [a, b, c] = ['a', 'b', 'c'].map((x) => `${jake.username}-${x}`) as [string, string, string]
    // the tags come into being in reverse name order: their ids, which the links' index follows, run opposite to their names
    for (const tag of [c, b, a]) await createArticle(app, other.token, { tagList: [tag] })
    await createArticle(app, jake.token, { tagList: [a, b, c] })
    const holder = await sessionBeside(app.db)
    let deleting: Promise<unknown> | undefined
    try {
      // as a creation tagged [a, c] does: a first, then c
      await holder.begin(async (tx) => {
        await tx`SELECT 1 FROM tags WHERE name = ${a} FOR NO KEY UPDATE`
        deleting = attempt(() => usersOn(app.store).writes.delete(ADMIN, jake.username, true))
        deleting.catch(() => {})
        const waiting = () => lockWaiters(app.db)
        for (let i = 0; i < 200 && (await waiting()) < 1; i++) await Bun.sleep(25)
        expect(await waiting()).toBe(1)
        // the deletion waits for a, holding none of the others: c is free at once (before PostgreSQL's deadlock check, 1 s, would end either)
        await tx`SET LOCAL lock_timeout = '500ms'`
        await tx`SELECT 1 FROM tags WHERE name = ${c} FOR NO KEY UPDATE`
      })
    } finally {
      await holder.close()
    }
    expect(await deleting).toMatchObject({ username: jake.username, articles: 1 })
    expect((await app.request('GET', `/api/profiles/${jake.username}`)).status).toBe(404)
    expect((await app.request('GET', '/api/tags')).body.tags).toEqual(expect.arrayContaining([a, b, c]))
  },
)

describe("the operator's password reset", () => {
  test('the new password logs in, the old one no longer does, and every earlier token is refused', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    expect((await me(app, jake.token)).status).toBe(200)
    const hash = await Bun.password.hash('a brand new password', { algorithm: 'argon2id', memoryCost: 256, timeCost: 1 })
    expect(await usersOn(app.store).writes.setPassword(ADMIN, jake.username, hash)).toMatchObject({
      username: jake.username,
      changed: true,
    })
    expect((await me(app, jake.token)).status).toBe(401)
    expect((await login(app, jake, jake.password)).status).toBe(401)
    const fresh = await login(app, jake, 'a brand new password')
    expect(fresh.status).toBe(200)
    expect((await me(app, fresh.body.user.token)).status).toBe(200)
  })
})

describe('the operator alone administers accounts', () => {
  test('a signed-in user (not ADMIN) gets 403 for a password, a lock and a deletion, and nothing changes', async () => {
    const app = await conduitApp()
    const [jake, ann] = [await registerUser(app), await registerUser(app)]
    const w = await writer(app, jake)
    const writes: (() => unknown)[] = [
      () => usersOn(app.store).writes.setPassword(w, ann.username, 'x'),
      () => usersOn(app.store).writes.setLocked(w, ann.username, true),
      () => usersOn(app.store).writes.delete(w, ann.username, true),
    ]
    for (const write of writes) {
      await expect(attempt(write)).rejects.toMatchObject({ status: 403 })
    }
    expect((await login(app, ann, ann.password)).status).toBe(200)
  })

  test('an unknown username is 404 for each of them', async () => {
    const app = await conduitApp()
    const writes: (() => unknown)[] = [
      () => usersOn(app.store).writes.setPassword(ADMIN, 'nobody', 'x'),
      () => usersOn(app.store).writes.setLocked(ADMIN, 'nobody', true),
      () => usersOn(app.store).writes.delete(ADMIN, 'nobody', true),
    ]
    for (const write of writes) {
      await expect(attempt(write)).rejects.toMatchObject({ status: 404, errors: { user: ['not found'] } })
    }
  })
})

describe('deleting an account', () => {
  /** jake wrote an article (tagged, favorited by ann, commented by ann) and a comment on ann's article; follows both ways; favorited ann's article. */
  async function world() {
    const app = await conduitApp()
    const [jake, ann, bob] = [await registerUser(app), await registerUser(app), await registerUser(app)]
    const mine = await createArticle(app, jake.token, { tagList: ['only-jake', 'shared'] })
    const hers = await createArticle(app, ann.token, { tagList: ['shared'] })
    await addComment(app, ann.token, mine.slug)
    await addComment(app, jake.token, hers.slug)
    await favorite(app, ann.token, mine.slug)
    await favorite(app, jake.token, hers.slug)
    await favorite(app, bob.token, hers.slug)
    await follow(app, jake.token, ann.username)
    await follow(app, ann.token, jake.username)
    return { app, jake, ann, bob, mine, hers }
  }

  test('refuses an author without --with-content, naming what it wrote, and deletes nothing', async () => {
    const { app, jake, mine } = await world()
    const before = await app.db.count('SELECT count(*) FROM users')
    const refused = await attempt(() => usersOn(app.store).writes.delete(ADMIN, jake.username, false)).catch((e) => e)
    expect(refused).toBeInstanceOf(AccountHasContent)
    expect(refused).toMatchObject({ username: jake.username, articles: 1, comments: 1 })
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(before)
    expect((await app.request('GET', `/api/articles/${mine.slug}`)).status).toBe(200)
    expect((await me(app, jake.token)).status).toBe(200)
  })

  test('takes an account that wrote nothing without --with-content, with its favorites and follows', async () => {
    const { app, ann, bob, hers } = await world()
    await follow(app, bob.token, ann.username)
    const d = await usersOn(app.store).writes.delete(ADMIN, bob.username, false)
    expect(d).toMatchObject({ username: bob.username, articles: 0, comments: 0, favorites: 1, follows: 1 })
    expect((await app.request('GET', `/api/articles/${hers.slug}`)).body.article.favoritesCount).toBe(1)
    expect((await me(app, bob.token)).status).toBe(401)
    expect(await storageViolations(app.db)).toEqual([])
  })

  test('--with-content: everything of it goes, every count is exact, every cache answers it', async () => {
    const { app, jake, ann, mine, hers } = await world()
    // warm what the deletion changes
    const reads = [
      `/api/articles/${mine.slug}`,
      `/api/articles/${hers.slug}`,
      `/api/articles/${hers.slug}/comments`,
      `/api/profiles/${jake.username}`,
      '/api/articles',
      '/api/tags',
      `/api/articles?favorited=${jake.username}`,
    ]
    for (const p of reads) await app.request('GET', p, { token: ann.token })
    await app.request('GET', '/api/articles/feed', { token: ann.token })

    const d = await usersOn(app.store).writes.delete(ADMIN, jake.username, true)
    expect(d).toMatchObject({ username: jake.username, articles: 1, comments: 1, favorites: 1, follows: 2 })

    expect((await me(app, jake.token)).status).toBe(401)
    expect((await app.request('GET', `/api/articles/${mine.slug}`)).status).toBe(404)
    expect((await app.request('GET', `/api/profiles/${jake.username}`)).status).toBe(404)
    const list = await app.request('GET', '/api/articles', { token: ann.token })
    expect(list.body.articles.map((a: { slug: string }) => a.slug)).toEqual([hers.slug])
    expect(list.body.articlesCount).toBe(1)
    expect((await app.request('GET', `/api/articles/${hers.slug}`)).body.article.favoritesCount).toBe(1)
    expect((await app.request('GET', `/api/articles/${hers.slug}/comments`)).body.comments).toEqual([])
    expect((await app.request('GET', '/api/tags')).body.tags).toEqual(['shared'])
    expect((await app.request('GET', '/api/articles/feed', { token: ann.token })).body.articlesCount).toBe(0)
    const counts = await app.db.get<{ articles_count: number; favorites_count: number }>(
      'SELECT articles_count, favorites_count FROM users WHERE email = ?',
      ann.email,
    )
    expect({ articles: Number(counts!.articles_count), favorites: Number(counts!.favorites_count) }).toEqual({ articles: 1, favorites: 0 })
    expect(await storageViolations(app.db)).toEqual([])
    // a deletion that touches everything says so: every process drops every cache
    const last = await app.db.get<{ keys: string }>('SELECT keys FROM changes ORDER BY seq DESC LIMIT 1')
    expect(fromLog(last!.keys)).toEqual([EVERYTHING])
  })

  test(`an author of more than ${DELETE_BATCH} articles and favorites, deleted in steps: every count as if at once`, async () => {
    const app = await conduitApp()
    const [prolific, other] = [await registerUser(app), await registerUser(app)]
    const n = DELETE_BATCH + 1
    for (let i = 0; i < n; i++) await createArticle(app, prolific.token, { title: `Mine ${i}`, tagList: ['common'] })
    const theirs: string[] = []
    for (let i = 0; i < n; i++) theirs.push((await createArticle(app, other.token, { title: `Theirs ${i}`, tagList: ['common'] })).slug)
    for (const slug of theirs) await favorite(app, prolific.token, slug)

    const d = await usersOn(app.store).writes.delete(ADMIN, prolific.username, true)
    expect(d).toMatchObject({ username: prolific.username, articles: n, favorites: n })
    const list = await app.request('GET', `/api/articles?tag=common&limit=1`)
    expect(list.body.articlesCount).toBe(n)
    expect((await app.request('GET', '/api/articles?limit=1')).body.articlesCount).toBe(n)
    expect(await app.db.count('SELECT count(*) FROM favorites')).toBe(0)
    expect(await app.db.count('SELECT sum(favorites_count) FROM articles')).toBe(0)
    expect(await app.db.count("SELECT articles_count FROM tags WHERE name = 'common'")).toBe(n)
    expect(await storageViolations(app.db)).toEqual([])
  }, 120_000)
})

describe('the operator deletes a comment by its id alone', () => {
  test('of any article; the list answers it at once; an unknown id is 404; a stranger 403, the article’s author may', async () => {
    const app = await conduitApp()
    const [jake, ann, bob] = [await registerUser(app), await registerUser(app), await registerUser(app)]
    const { slug } = await createArticle(app, jake.token)
    const [c1, c2] = [await addComment(app, ann.token, slug), await addComment(app, ann.token, slug)]
    const path = `/api/articles/${slug}/comments`
    expect((await app.request('GET', path)).body.comments).toHaveLength(2)
    expect(await commentsOn(app.store).writes.deleteById(ADMIN, c1.id)).toEqual({ slug })
    expect((await app.request('GET', path)).body.comments.map((c: { id: number }) => c.id)).toEqual([c2.id])
    await expect(attempt(() => commentsOn(app.store).writes.deleteById(ADMIN, c1.id))).rejects.toMatchObject({ status: 404 })
    await expect(attempt(() => commentsOn(app.store).writes.deleteById(ADMIN, 2 ** 40))).rejects.toMatchObject({ status: 404 })
    const stranger = await writer(app, bob)
    await expect(attempt(() => commentsOn(app.store).writes.deleteById(stranger, c2.id))).rejects.toMatchObject({ status: 403 })
    await commentsOn(app.store).writes.deleteById(await writer(app, jake), c2.id)
    expect((await app.request('GET', path)).body.comments).toEqual([])
  })
})

describe('accounts as the operator lists them', () => {
  test('newest first, bounded, found by part of the username or email in any ASCII case; never a password hash', async () => {
    const app = await conduitApp()
    const users: RegisteredUser[] = []
    for (const name of ['Alice', 'bob', 'carol']) users.push(await registerUser(app, { username: `${name}${Date.now() % 1000}` }))
    const all = await usersOn(app.store).sql.accounts(null, 10)
    expect(all.map((a) => a.username)).toEqual(users.map((u) => u.username).reverse())
    expect(Object.keys(all[0]!).sort()).toEqual(['bio', 'created_at', 'email', 'id', 'image', 'locked_at', 'username'])
    expect((await usersOn(app.store).sql.accounts(null, 2)).map((a) => a.username)).toEqual([users[2]!.username, users[1]!.username])
    expect((await usersOn(app.store).sql.accounts(accountSearch('ALI'), 10)).map((a) => a.username)).toEqual([users[0]!.username])
    expect((await usersOn(app.store).sql.accounts(accountSearch('BOB'), 10)).map((a) => a.username)).toEqual([users[1]!.username])
    // in the email only: the domain
    expect(await usersOn(app.store).sql.accounts(accountSearch('@EXAMPLE.com'), 10)).toHaveLength(3)
    expect(await usersOn(app.store).sql.accounts(accountSearch('%'), 10)).toEqual([])
    await usersOn(app.store).writes.setLocked(ADMIN, users[1]!.username, true)
    expect((await usersOn(app.store).sql.accounts(null, 10)).map((a) => a.locked_at !== null)).toEqual([false, true, false])
  })

  test('one account with its counts', async () => {
    const app = await conduitApp()
    const [jake, ann] = [await registerUser(app), await registerUser(app)]
    const { slug } = await createArticle(app, jake.token)
    await addComment(app, jake.token, slug)
    await addComment(app, jake.token, slug)
    await favorite(app, ann.token, slug)
    await favorite(app, jake.token, slug)
    await follow(app, ann.token, jake.username)
    const a = await usersOn(app.store).sql.account(jake.username.toLowerCase())
    expect(a).toMatchObject({ username: jake.username, email: jake.email, locked_at: null })
    expect(a).toMatchObject({ articles: 1, comments: 2, favorites: 1, followers: 1, following: 0 })
    expect(await usersOn(app.store).sql.account('nobody')).toBeNull()
  })
})
