import { describe, expect, test } from 'bun:test'
import { sqliteArticleSql } from '../../src/articles/sqlite.ts'
import { articleWrites } from '../../src/articles/writes.ts'
import { ADMIN } from '../../src/auth/actor.ts'
import { fromLog, keys } from '../../src/keys/keys.ts'
import { EVERYTHING } from '../../src/keys/versions.ts'
import { sqliteCommentSql } from '../../src/comments/sqlite.ts'
import { commentWrites } from '../../src/comments/writes.ts'
import type { SqliteChanges } from '../../src/db/sqlite/changes.ts'
import type { SqliteStore } from '../../src/db/sqlite/store.ts'
import { sqliteWrites, tokenCheck } from '../../src/db/sqlite/writes.ts'
import type { Writes } from '../../src/db/steps.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { sqliteTestDatabase } from '../support/backend.ts'
import { addComment, conduitApp } from '../support/conduit.ts'
import { createArticle, type RegisteredUser, registerUser } from '../support/fixtures.ts'
import { skipIf, why } from '../support/skip.ts'
import { articlesOn } from '../../src/articles/index.ts'
import { commentsOn } from '../../src/comments/index.ts'
import { profilesOn } from '../../src/profiles/index.ts'
import { usersOn } from '../../src/users/index.ts'

/**
 * The write policies (each feature's writes.ts) decide once for both backends:
 * who may write, and which change keys each write records. Other processes and
 * instances drop exactly what those keys name, so both backends must record
 * the same keys for the same writes.
 */

describe('the operator (ADMIN) as the actor of a deletion', () => {
  test('deletes anyone’s article; a stranger gets 403 and the article stays', async () => {
    const app = await conduitApp()
    const [author, stranger] = [await registerUser(app), await registerUser(app)]
    const { slug } = await createArticle(app, author.token)
    expect((await app.request('DELETE', `/api/articles/${slug}`, { token: stranger.token })).status).toBe(403)
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
    await articlesOn(app.store).writes.delete(ADMIN, slug)
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(404)
  })

  test('deletes anyone’s comment; a stranger gets 403 and the comment stays', async () => {
    const app = await conduitApp()
    const [author, commenter, stranger] = [await registerUser(app), await registerUser(app), await registerUser(app)]
    const { slug } = await createArticle(app, author.token)
    const { id } = await addComment(app, commenter.token, slug)
    const path = `/api/articles/${slug}/comments`
    expect((await app.request('DELETE', `${path}/${id}`, { token: stranger.token })).status).toBe(403)
    expect((await app.request('GET', path)).body.comments).toHaveLength(1)
    await commentsOn(app.store).writes.delete(ADMIN, slug, id)
    expect((await app.request('GET', path)).body.comments).toEqual([])
  })

  test('still gets 404 for what does not exist', async () => {
    const app = await conduitApp()
    const author = await registerUser(app)
    const { slug } = await createArticle(app, author.token)
    // a thrown error on SQLite, a rejection on PostgreSQL
    const attempt = (f: () => unknown) => Promise.resolve().then(f)
    await expect(attempt(() => articlesOn(app.store).writes.delete(ADMIN, 'no-such-article'))).rejects.toThrow('not found')
    await expect(attempt(() => commentsOn(app.store).writes.delete(ADMIN, slug, 12345))).rejects.toThrow('not found')
  })
})

describe('writes on SQLite', () => {
  test('answer synchronously, every one of them (no await inside a SQLite transaction)', async () => {
    const { store } = await sqliteTestDatabase()
    const sync = <T>(v: T | Promise<T>): T => {
      expect(v).not.toBeInstanceOf(Promise)
      return v as T
    }
    const ann = sync(usersOn(store).writes.create({ username: 'ann', usernameKey: 'ann', email: 'ann@example.com', passwordHash: 'x' }))
    const bob = sync(usersOn(store).writes.create({ username: 'bob', usernameKey: 'bob', email: 'bob@example.com', passwordHash: 'x' }))
    const writer = { id: ann.id, username: 'ann', usernameKey: 'ann' }
    const { slug } = sync(articlesOn(store).writes.create(writer, { title: 'Sync', description: 'd', body: 'b', tagList: ['t'] })).row
    sync(articlesOn(store).writes.update(writer, slug, { title: 'Synchronous', tagList: ['u'] }))
    sync(articlesOn(store).writes.setFavorite(writer, 'synchronous', true))
    sync(profilesOn(store).writes.setFollowing(ann.id, bob.id, true))
    const comment = sync(commentsOn(store).writes.add(ann.id, 'synchronous', 'c'))
    sync(commentsOn(store).writes.delete(writer, 'synchronous', comment.id))
    sync(usersOn(store).writes.update(ann.id, { bio: 'b' }))
    // a refused write throws at once too (its 409 read of the taken fields included)
    expect(() => usersOn(store).writes.update(bob.id, { email: 'ann@example.com' })).toThrow()
    sync(articlesOn(store).writes.delete(ADMIN, 'synchronous'))
  })
})

describe('write steps', () => {
  // A `function*` expression evaluated per write is a new function each time, whose generator
  // objects take shapes of their own: the JIT then compiles the steps again and again (src/db/steps.ts).
  test('each kind of write runs the steps of one generator function, however many writes run', async () => {
    const { store } = await sqliteTestDatabase()
    const { db, changes } = store as SqliteStore
    const kinds = new Set<unknown>()
    let transactions = 0
    const recording = <S>(w: Writes<S>): Writes<S> => ({
      ...w,
      transaction: (steps, by) =>
        w.transaction((sql, changed) => {
          const g = steps(sql, changed)
          transactions++
          kinds.add(Object.getPrototypeOf(g))
          return g
        }, by),
    })
    const articles = articleWrites(recording(sqliteWrites(changes as SqliteChanges, tokenCheck(db), sqliteArticleSql(db))))
    const comments = commentWrites(recording(sqliteWrites(changes as SqliteChanges, tokenCheck(db), sqliteCommentSql(db))))
    const ann = await usersOn(store).writes.create({ username: 'ann', usernameKey: 'ann', email: 'ann@example.com', passwordHash: 'x' })
    const writer = { id: ann.id, username: 'ann', usernameKey: 'ann' }
    for (let i = 0; i < 3; i++) {
      const { slug } = (await articles.create(writer, { title: `Steps ${i}`, description: 'd', body: 'b' })).row
      await articles.setFavorite(writer, slug, true)
      await articles.setFavorite(writer, slug, false)
      await comments.add(ann.id, slug, 'c')
    }
    expect(transactions).toBe(12)
    // create, setFavorite (both ways) and add: three generator functions
    expect(kinds.size).toBe(3)
  })
})

/** One write through the app, with the status it must answer. */
interface Step {
  label: string
  status: number
  run(w: World): Promise<{ status: number }>
}
interface World {
  app: TestApp
  jake: RegisteredUser
  ann: RegisteredUser
  bob: RegisteredUser
}

const as = (w: World, who: RegisteredUser, method: string, path: string, body?: unknown) =>
  w.app.request(method, path, { token: who.token, ...(body !== undefined ? { body } : {}) })
const article = (fields: Record<string, unknown>) => ({ article: { description: 'd', body: 'b', ...fields } })
const ok = async (f: () => Promise<unknown>) => {
  await f()
  return { status: 200 }
}
/** An operator's write through the store: 200, or the status it was refused with (0 when the refusal is no HTTP error). */
const byAdmin = (f: () => unknown) =>
  Promise.resolve()
    .then(f)
    .then(
      () => ({ status: 200 }),
      (e) => ({ status: (e as { status?: number }).status ?? 0 }),
    )

/** Every kind of write, including the ones that change nothing (idempotent, refused): the same on both backends. */
const STEPS: Step[] = [
  { label: 'follow', status: 200, run: (w) => as(w, w.ann, 'POST', `/api/profiles/${w.jake.username}/follow`) },
  { label: 'follow again', status: 200, run: (w) => as(w, w.ann, 'POST', `/api/profiles/${w.jake.username}/follow`) },
  { label: 'unfollow a stranger', status: 200, run: (w) => as(w, w.bob, 'DELETE', `/api/profiles/${w.jake.username}/follow`) },
  { label: 'bob follows', status: 200, run: (w) => as(w, w.bob, 'POST', `/api/profiles/${w.ann.username}/follow`) },
  { label: 'bob unfollows', status: 200, run: (w) => as(w, w.bob, 'DELETE', `/api/profiles/${w.ann.username}/follow`) },
  { label: 'follow yourself', status: 422, run: (w) => as(w, w.bob, 'POST', `/api/profiles/${w.bob.username}/follow`) },
  { label: 'unfollow yourself', status: 422, run: (w) => as(w, w.bob, 'DELETE', `/api/profiles/${w.bob.username}/follow`) },
  {
    label: 'create with tags',
    status: 201,
    run: (w) => as(w, w.jake, 'POST', '/api/articles', article({ title: 'Hello', tagList: ['b', 'a'] })),
  },
  { label: 'create the same title', status: 201, run: (w) => as(w, w.jake, 'POST', '/api/articles', article({ title: 'Hello' })) },
  { label: 'create "Feed"', status: 201, run: (w) => as(w, w.jake, 'POST', '/api/articles', article({ title: 'Feed', tagList: ['a'] })) },
  { label: 'edit the body', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/articles/hello', { article: { body: 'new' } }) },
  { label: 'retitle, same slug', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/articles/hello', { article: { title: 'HELLO!' } }) },
  { label: 'retitle', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/articles/hello', { article: { title: 'Goodbye' } }) },
  { label: 'change tags', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/articles/goodbye', { article: { tagList: ['a', 'c'] } }) },
  { label: 'edit: not the author', status: 403, run: (w) => as(w, w.bob, 'PUT', '/api/articles/goodbye', { article: { body: 'x' } }) },
  { label: 'favorite', status: 200, run: (w) => as(w, w.ann, 'POST', '/api/articles/goodbye/favorite') },
  { label: 'favorite again', status: 200, run: (w) => as(w, w.ann, 'POST', '/api/articles/goodbye/favorite') },
  { label: 'unfavorite, not favorited', status: 200, run: (w) => as(w, w.bob, 'DELETE', '/api/articles/goodbye/favorite') },
  { label: 'unfavorite', status: 200, run: (w) => as(w, w.ann, 'DELETE', '/api/articles/goodbye/favorite') },
  { label: 'comment', status: 201, run: (w) => as(w, w.ann, 'POST', '/api/articles/hello-2/comments', { comment: { body: 'c1' } }) },
  { label: 'comment 2', status: 201, run: (w) => as(w, w.jake, 'POST', '/api/articles/hello-2/comments', { comment: { body: 'c2' } }) },
  { label: 'delete a comment: a stranger', status: 403, run: (w) => as(w, w.bob, 'DELETE', '/api/articles/hello-2/comments/2') },
  { label: 'delete a comment: the article’s author', status: 204, run: (w) => as(w, w.jake, 'DELETE', '/api/articles/hello-2/comments/1') },
  { label: 'delete an article: a stranger', status: 403, run: (w) => as(w, w.bob, 'DELETE', '/api/articles/hello-2') },
  { label: 'edit the bio', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/user', { user: { bio: 'hi' } }) },
  { label: 'rename', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/user', { user: { username: 'jacob' } }) },
  { label: 'rename, other case', status: 200, run: (w) => as(w, w.jake, 'PUT', '/api/user', { user: { username: 'Jacob' } }) },
  { label: 'email taken', status: 409, run: (w) => as(w, w.jake, 'PUT', '/api/user', { user: { email: w.ann.email } }) },
  {
    label: 'password',
    status: 200,
    async run(w) {
      const res = await as(w, w.jake, 'PUT', '/api/user', { user: { password: 'another password' } })
      w.jake.token = res.body.user.token
      return res
    },
  },
  { label: 'delete an article with comments', status: 204, run: (w) => as(w, w.jake, 'DELETE', '/api/articles/hello-2') },
  { label: 'comment 3', status: 201, run: (w) => as(w, w.ann, 'POST', '/api/articles/goodbye/comments', { comment: { body: 'c3' } }) },
  {
    label: 'ADMIN deletes a comment',
    status: 200,
    run: (w) => ok(() => Promise.resolve(commentsOn(w.app.store).writes.delete(ADMIN, 'goodbye', 3))),
  },
  {
    label: 'ADMIN deletes an article',
    status: 200,
    run: (w) => ok(() => Promise.resolve(articlesOn(w.app.store).writes.delete(ADMIN, 'feed-2'))),
  },
  { label: 'ADMIN locks an account', status: 200, run: (w) => byAdmin(() => usersOn(w.app.store).writes.setLocked(ADMIN, 'ann', true)) },
  { label: 'ADMIN locks it again', status: 200, run: (w) => byAdmin(() => usersOn(w.app.store).writes.setLocked(ADMIN, 'ann', true)) },
  { label: 'ADMIN unlocks it', status: 200, run: (w) => byAdmin(() => usersOn(w.app.store).writes.setLocked(ADMIN, 'ann', false)) },
  { label: 'ADMIN sets a password', status: 200, run: (w) => byAdmin(() => usersOn(w.app.store).writes.setPassword(ADMIN, 'bob', 'x')) },
  {
    label: 'lock: not ADMIN',
    status: 403,
    run: (w) => byAdmin(() => usersOn(w.app.store).writes.setLocked({ id: 3, username: 'bob', usernameKey: 'bob' }, 'ann', true)),
  },
  { label: 'comment 4', status: 201, run: (w) => as(w, w.jake, 'POST', '/api/articles/goodbye/comments', { comment: { body: 'c4' } }) },
  { label: 'ADMIN deletes a comment by id', status: 200, run: (w) => byAdmin(() => commentsOn(w.app.store).writes.deleteById(ADMIN, 4)) },
  {
    label: 'ADMIN deletes an author without content',
    status: 0,
    run: (w) => byAdmin(() => usersOn(w.app.store).writes.delete(ADMIN, 'jacob', false)),
  },
  {
    label: 'ADMIN deletes an author with content',
    status: 200,
    run: (w) => byAdmin(() => usersOn(w.app.store).writes.delete(ADMIN, 'jacob', true)),
  },
]

/** Runs every step on a fresh app: the keys each one appended to the change log, by label. */
async function keysOfEveryStep(app: TestApp): Promise<[string, string[]][]> {
  const users = []
  for (const name of ['jake', 'ann', 'bob']) users.push(await registerUser(app, { username: name }))
  const [jake, ann, bob] = users as [RegisteredUser, RegisteredUser, RegisteredUser]
  const w: World = { app, jake, ann, bob }
  const out: [string, string[]][] = [
    ['register', (await app.db.all<{ keys: string }>('SELECT keys FROM changes')).map((r) => fromLog(r.keys).join(' '))],
  ]
  for (const step of STEPS) {
    const before = await app.db.count('SELECT coalesce(max(seq), 0) FROM changes')
    const res = await step.run(w)
    expect({ step: step.label, status: res.status }).toEqual({ step: step.label, status: step.status })
    const rows = await app.db.all<{ keys: string }>('SELECT keys FROM changes WHERE seq > ? ORDER BY seq', before)
    out.push([step.label, rows.map((r) => fromLog(r.keys).join(' '))])
  }
  return out
}

const config = { passwordHash: { memoryCost: 256, timeCost: 1 } }

skipIf(why.postgresOnly).describe('change keys (compares SQLite with PostgreSQL, so in the PostgreSQL pass)', () => {
  test('every write records the same change keys on SQLite and PostgreSQL', async () => {
    const sqlite = await keysOfEveryStep(await testApp(config, await sqliteTestDatabase()))
    const postgres = await keysOfEveryStep(await testApp(config))
    expect(postgres).toEqual(sqlite)
    // and they are the keys the writes change (ids: jake 1, ann 2; goodbye is article 1)
    const of = new Map(sqlite)
    for (const none of ['register', 'follow again', 'unfollow a stranger', 'favorite again', 'unfavorite, not favorited', 'email taken']) {
      expect({ none, keys: of.get(none) }).toEqual({ none, keys: [] })
    }
    for (const refused of ['edit: not the author', 'delete a comment: a stranger', 'delete an article: a stranger']) {
      expect({ refused, keys: of.get(refused) }).toEqual({ refused, keys: [] })
    }
    expect(of.get('follow')).toEqual([String(keys.viewer(2))])
    // bob (3) follows ann, then unfollows: his relations change both times; following yourself is refused, with no keys
    expect(of.get('bob follows')).toEqual([String(keys.viewer(3))])
    expect(of.get('bob unfollows')).toEqual([String(keys.viewer(3))])
    for (const refused of ['follow yourself', 'unfollow yourself'])
      expect({ refused, keys: of.get(refused) }).toEqual({ refused, keys: [] })
    expect(of.get('favorite')).toEqual([[keys.article(1), keys.favoritesOf(2), keys.favoritedBy('ann')].join(' ')])
    expect(of.get('ADMIN deletes a comment')).toEqual([String(keys.comments(1))])
    for (const none of ['ADMIN locks it again', 'lock: not ADMIN', 'ADMIN deletes an author without content']) {
      expect({ none, keys: of.get(none) }).toEqual({ none, keys: [] })
    }
    expect(of.get('ADMIN locks an account')).toEqual([String(keys.user(2))])
    expect(of.get('ADMIN sets a password')).toEqual([String(keys.user(3))])
    expect(of.get('ADMIN deletes a comment by id')).toEqual([String(keys.comments(1))])
    // the account locked first (its tokens refused), its articles in steps (users/writes.ts
    // DELETE_BATCH), then the account: a change each
    // (jacob is jake, renamed: user 1)
    expect(of.get('ADMIN deletes an author with content')).toEqual([String(keys.user(1)), String(EVERYTHING), String(EVERYTHING)])
  })
})
