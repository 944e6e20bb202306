import { describe, expect, test } from 'bun:test'
import type { TestApp, TestResponse } from '../support/app.ts'
import { articlesOn } from '../../src/articles/index.ts'
import type { Viewer } from '../../src/auth/actor.ts'
import { fromLog, keys } from '../../src/keys/keys.ts'
import { usernameKey } from '../../src/names.ts'
import { lockWaiters, sessionBeside } from '../support/backend.ts'
import { skipIf, why } from '../support/skip.ts'
import { NEWEST_WINDOW } from '../../src/articles/reads.ts'
import { seedDatabase } from '../../src/cli/seed-data.ts'
import { conduitApp, follow, registerUsers, slugsOf } from '../support/conduit.ts'
import { createArticle, type RegisteredUser } from '../support/fixtures.ts'

/**
 * Each write drops exactly what it changed (src/keys/keys.ts). For every
 * kind of write: warm every read it may affect (anonymous and signed in, from
 * more than one viewer), write, and check each of those reads shows the
 * write at once; then check that what the write cannot change is still served
 * from the caches (it is not rebuilt).
 */
interface World {
  app: TestApp
  author: RegisteredUser
  reader: RegisteredUser
  other: RegisteredUser
  slug: string
  otherSlug: string
}

async function world(): Promise<World> {
  const app = await conduitApp()
  const [author, reader, other] = await registerUsers(app, 3)
  await follow(app, reader!.token, author!.username)
  const { slug } = await createArticle(app, author!.token, { title: 'Watched', tagList: ['watched'] })
  const { slug: otherSlug } = await createArticle(app, other!.token, { title: 'Bystander', tagList: ['bystander'] })
  return { app, author: author!, reader: reader!, other: other!, slug, otherSlug }
}

const get = async (w: World, path: string, who?: RegisteredUser) => {
  const res = await w.app.request('GET', path, who ? { token: who.token } : {})
  expect({ path, status: res.status }).toEqual({ path, status: 200 })
  return res.body
}

/** Reads everything twice (so it is cached) as anonymous, reader and other. */
async function warm(w: World, paths: string[]) {
  for (let i = 0; i < 2; i++) for (const who of [undefined, w.reader, w.other]) for (const p of paths) await get(w, p, who)
}

/** The list parts and whole articles the caches hold now, by id. */
const cachedItems = (w: World) => w.app.app.caches.named('items').size + w.app.app.caches.named('articles').size

describe('exact invalidation: a write, then every read it may affect, caches warm', () => {
  test('a favorite changes the article’s count, the favoriter’s flag and favorited list; nothing else', async () => {
    const w = await world()
    const paths = [
      '/api/articles',
      `/api/articles/${w.slug}`,
      `/api/articles?favorited=${w.reader.username}`,
      `/api/articles/${w.otherSlug}`,
      '/api/articles/feed',
    ]
    await warm(w, [...paths.filter((p) => p !== '/api/articles/feed'), `/api/articles/${w.slug}/comments`])
    await get(w, '/api/articles/feed', w.reader)
    const bystander = w.app.app.caches.named('articles').size
    const articleId = (await w.app.db.get<{ id: number }>('SELECT id FROM articles WHERE slug = ?', w.slug))!.id
    expect(w.app.app.caches.named('comments').get(articleId)).toBeDefined()
    const readerId = (await w.app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', w.reader.username))!.id
    const feedIds = () => w.app.app.caches.named('pages').get(`feed|${readerId}|20|0`)
    expect(feedIds()).toBeDefined()
    expect((await w.app.request('POST', `/api/articles/${w.slug}/favorite`, { token: w.reader.token })).status).toBe(200)
    // the favoriter's feed lists the same articles: its ids stay cached, its flags change below
    expect(feedIds()).toBeDefined()
    // nor does it change the article's comments, or its address: its slug finds it without a read
    expect(w.app.app.caches.named('comments').get(articleId)).toBeDefined()
    expect(w.app.app.caches.named('slugs').get(w.slug)).toMatchObject({ id: articleId })
    expect((await get(w, `/api/articles/${w.slug}/comments`, w.reader)).comments).toEqual([])
    expect((await get(w, `/api/articles/${w.slug}`)).article.favoritesCount).toBe(1)
    expect((await get(w, `/api/articles/${w.slug}`, w.reader)).article.favorited).toBe(true)
    expect((await get(w, `/api/articles/${w.slug}`, w.other)).article.favorited).toBe(false)
    expect((await get(w, '/api/articles')).articles.find((a: { slug: string }) => a.slug === w.slug).favoritesCount).toBe(1)
    expect((await get(w, '/api/articles/feed', w.reader)).articles[0]).toMatchObject({ slug: w.slug, favorited: true, favoritesCount: 1 })
    expect((await get(w, `/api/articles?favorited=${w.reader.username}`)).articlesCount).toBe(1)
    // the other article's whole text stayed cached
    expect(
      w.app.app.caches
        .named('articles')
        .get((await w.app.db.get<{ id: number }>('SELECT id FROM articles WHERE slug = ?', w.otherSlug))!.id),
    ).toBeDefined()
    expect(w.app.app.caches.named('articles').size).toBeGreaterThanOrEqual(bystander - 1)
  })

  test('a comment changes that article’s comment list only', async () => {
    const w = await world()
    await warm(w, [`/api/articles/${w.slug}/comments`, `/api/articles/${w.otherSlug}/comments`, `/api/articles/${w.slug}`])
    const before = cachedItems(w)
    const res = await w.app.request('POST', `/api/articles/${w.slug}/comments`, {
      token: w.other.token,
      body: { comment: { body: 'new' } },
    })
    expect(res.status).toBe(201)
    for (const who of [undefined, w.reader, w.other])
      expect((await get(w, `/api/articles/${w.slug}/comments`, who)).comments).toHaveLength(1)
    expect((await get(w, `/api/articles/${w.otherSlug}/comments`)).comments).toHaveLength(0)
    // no article text was dropped by a comment
    expect(cachedItems(w)).toBe(before)
    expect(
      (await w.app.request('DELETE', `/api/articles/${w.slug}/comments/${res.body.comment.id}`, { token: w.other.token })).status,
    ).toBe(204)
    for (const who of [undefined, w.reader]) expect((await get(w, `/api/articles/${w.slug}/comments`, who)).comments).toHaveLength(0)
  })

  test('a new title moves the article and its comments to the new slug; the old one answers 404', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.slug}/comments`, { token: w.other.token, body: { comment: { body: 'kept' } } })
    await warm(w, [`/api/articles/${w.slug}`, `/api/articles/${w.slug}/comments`])
    const res = await w.app.request('PUT', `/api/articles/${w.slug}`, {
      token: w.author.token,
      body: { article: { title: 'Renamed title' } },
    })
    expect(res.status).toBe(200)
    const slug = res.body.article.slug
    expect(slug).not.toBe(w.slug)
    expect(w.app.app.caches.named('slugs').get(w.slug)).toBeUndefined()
    for (const who of [undefined, w.reader, w.other]) {
      const token = who ? { token: who.token } : {}
      expect((await w.app.request('GET', `/api/articles/${w.slug}`, token)).status).toBe(404)
      expect((await w.app.request('GET', `/api/articles/${w.slug}/comments`, token)).status).toBe(404)
      expect((await get(w, `/api/articles/${slug}/comments`, who)).comments.map((c: { body: string }) => c.body)).toEqual(['kept'])
    }
  })

  test('a profile edit changes that user everywhere they appear: profile, articles, lists, comments', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.otherSlug}/comments`, { token: w.author.token, body: { comment: { body: 'hi' } } })
    const paths = [
      `/api/profiles/${w.author.username}`,
      `/api/articles/${w.slug}`,
      '/api/articles',
      `/api/articles/${w.otherSlug}/comments`,
    ]
    await warm(w, paths)
    expect(
      (await w.app.request('PUT', '/api/user', { token: w.author.token, body: { user: { bio: 'new bio', image: 'https://x.io/a.png' } } }))
        .status,
    ).toBe(200)
    for (const who of [undefined, w.reader, w.other]) {
      expect((await get(w, `/api/profiles/${w.author.username}`, who)).profile).toMatchObject({
        bio: 'new bio',
        image: 'https://x.io/a.png',
      })
      expect((await get(w, `/api/articles/${w.slug}`, who)).article.author.bio).toBe('new bio')
      expect((await get(w, '/api/articles', who)).articles.find((a: { slug: string }) => a.slug === w.slug).author.bio).toBe('new bio')
      expect((await get(w, `/api/articles/${w.otherSlug}/comments`, who)).comments[0].author.bio).toBe('new bio')
    }
    // the other author's article keeps its cached text
    expect((await get(w, `/api/articles/${w.otherSlug}`)).article.author.bio).toBeNull()
  })

  test('a new username moves the author and favorited lists to the new name', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.otherSlug}/favorite`, { token: w.author.token })
    const oldName = w.author.username
    await warm(w, [
      `/api/articles?author=${oldName}`,
      `/api/articles?favorited=${oldName}`,
      `/api/articles?author=renamed1`,
      `/api/articles?favorited=renamed1`,
    ])
    expect((await w.app.request('PUT', '/api/user', { token: w.author.token, body: { user: { username: 'renamed1' } } })).status).toBe(200)
    expect((await get(w, `/api/articles?author=${oldName}`)).articlesCount).toBe(0)
    expect((await get(w, `/api/articles?favorited=${oldName}`)).articlesCount).toBe(0)
    expect((await get(w, '/api/articles?author=renamed1')).articlesCount).toBe(1)
    expect((await get(w, '/api/articles?favorited=renamed1')).articlesCount).toBe(1)
    expect((await get(w, `/api/articles/${w.slug}`, w.reader)).article.author.username).toBe('renamed1')
  })

  test('a new article changes the newest-first list, its tags’ and author’s lists, the tag list and its author’s followers’ feeds only', async () => {
    const w = await world()
    const paths = [
      '/api/articles',
      '/api/articles?tag=fresh',
      `/api/articles?author=${w.author.username}`,
      '/api/tags',
      '/api/articles?tag=bystander',
    ]
    await warm(w, paths)
    for (const who of [w.reader, w.other]) await get(w, '/api/articles/feed', who)
    await follow(w.app, w.other.token, w.reader.username)
    const otherFeed = await get(w, '/api/articles/feed', w.other)
    await createArticle(w.app, w.author.token, { title: 'Fresh one', tagList: ['fresh'] })
    for (const who of [undefined, w.reader]) {
      expect((await get(w, '/api/articles', who)).articles[0].title).toBe('Fresh one')
      expect((await get(w, '/api/articles?tag=fresh', who)).articlesCount).toBe(1)
      expect((await get(w, `/api/articles?author=${w.author.username}`, who)).articlesCount).toBe(2)
      expect((await get(w, '/api/tags', who)).tags).toContain('fresh')
    }
    expect((await get(w, '/api/articles/feed', w.reader)).articles[0].title).toBe('Fresh one')
    // a feed that follows nobody who wrote: the same answer, and the bystander tag untouched
    expect(await get(w, '/api/articles/feed', w.other)).toEqual(otherFeed)
    expect((await get(w, '/api/articles?tag=bystander')).articlesCount).toBe(1)
  })

  test('an edit changes the article, and the lists of the tags it gains or loses', async () => {
    const w = await world()
    await warm(w, [`/api/articles/${w.slug}`, '/api/articles?tag=watched', '/api/articles?tag=gained', '/api/tags', '/api/articles'])
    const res = await w.app.request('PUT', `/api/articles/${w.slug}`, {
      token: w.author.token,
      body: { article: { body: 'edited', tagList: ['gained'] } },
    })
    expect(res.status).toBe(200)
    for (const who of [undefined, w.reader]) {
      expect((await get(w, `/api/articles/${w.slug}`, who)).article).toMatchObject({ body: 'edited', tagList: ['gained'] })
      expect((await get(w, '/api/articles?tag=watched', who)).articlesCount).toBe(0)
      expect((await get(w, '/api/articles?tag=gained', who)).articlesCount).toBe(1)
      expect((await get(w, '/api/tags', who)).tags).not.toContain('watched')
      expect((await get(w, '/api/articles', who)).articles.find((a: { slug: string }) => a.slug === w.slug).tagList).toEqual(['gained'])
    }
  })

  test('a follow changes that viewer’s flags and feed, not anyone else’s', async () => {
    const w = await world()
    await warm(w, [`/api/profiles/${w.other.username}`, `/api/articles/${w.otherSlug}`])
    await get(w, '/api/articles/feed', w.reader)
    await follow(w.app, w.reader.token, w.other.username)
    expect((await get(w, `/api/profiles/${w.other.username}`, w.reader)).profile.following).toBe(true)
    expect((await get(w, `/api/articles/${w.otherSlug}`, w.reader)).article.author.following).toBe(true)
    expect((await get(w, '/api/articles/feed', w.reader)).articlesCount).toBe(2)
    expect((await get(w, `/api/profiles/${w.other.username}`, w.author)).profile.following).toBe(false)
    expect((await get(w, `/api/profiles/${w.other.username}`)).profile.following).toBe(false)
  })

  test('a deletion removes the article from every list and its comments', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.slug}/favorite`, { token: w.other.token })
    const paths = [
      '/api/articles',
      `/api/articles?favorited=${w.other.username}`,
      '/api/articles?tag=watched',
      `/api/articles/${w.slug}/comments`,
    ]
    await warm(w, paths)
    await get(w, '/api/articles/feed', w.reader)
    expect((await w.app.request('DELETE', `/api/articles/${w.slug}`, { token: w.author.token })).status).toBe(204)
    expect((await get(w, '/api/articles')).articlesCount).toBe(1)
    expect((await get(w, `/api/articles?favorited=${w.other.username}`)).articlesCount).toBe(0)
    expect((await get(w, '/api/articles?tag=watched')).articlesCount).toBe(0)
    expect((await get(w, '/api/articles/feed', w.reader)).articlesCount).toBe(0)
    expect((await w.app.request('GET', `/api/articles/${w.slug}/comments`)).status).toBe(404)
    expect((await w.app.request('GET', `/api/articles/${w.slug}`)).status).toBe(404)
  })

  test('the newest article deleted, the next one is nobody’s favorite: its id is new, not the deleted one’s', async () => {
    const w = await world()
    const { slug } = await createArticle(w.app, w.author.token, { title: 'Newest' })
    await w.app.request('POST', `/api/articles/${slug}/favorite`, { token: w.reader.token })
    // the reader's favorites are cached (as ids) by any read they make
    expect((await get(w, `/api/articles/${slug}`, w.reader)).article.favorited).toBe(true)
    expect((await w.app.request('DELETE', `/api/articles/${slug}`, { token: w.author.token })).status).toBe(204)
    const next = await createArticle(w.app, w.author.token, { title: 'After it' })
    expect((await get(w, `/api/articles/${next.slug}`, w.reader)).article).toMatchObject({ favorited: false, favoritesCount: 0 })
    const listed = (await get(w, `/api/articles?author=${w.author.username}`, w.reader)).articles
    expect(listed.map((a: { slug: string; favorited: boolean }) => [a.slug, a.favorited])).toEqual([
      [next.slug, false],
      [w.slug, false],
    ])
  })
})

/**
 * A request's viewer comes from its token, checked before its write begins;
 * a rename may commit in between (on another instance, or while the write
 * waits for a lock). The write must still change the lists under the name the
 * database holds when it commits, or those lists stay stale everywhere.
 */
describe('a write keyed by its user’s name, racing a rename of that user', () => {
  /** The author as a token read before their rename names them, and the rename, done. */
  async function renamedAfterTheToken(w: World, to: string): Promise<Viewer> {
    const { id } = (await w.app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', w.author.username))!
    const before = { id, username: w.author.username, usernameKey: usernameKey(w.author.username) }
    expect((await w.app.request('PUT', '/api/user', { token: w.author.token, body: { user: { username: to } } })).status).toBe(200)
    return before
  }

  test('an article created under the old name is in the new name’s list, which was cached in between', async () => {
    const w = await world()
    const stale = await renamedAfterTheToken(w, 'renamed2')
    await warm(w, ['/api/articles?author=renamed2'])
    expect((await get(w, '/api/articles?author=renamed2')).articlesCount).toBe(1)
    const created = await articlesOn(w.app.store).writes.create(stale, { title: 'Raced', description: 'd', body: 'b' })
    expect(created.row.username).toBe('renamed2')
    for (const who of [undefined, w.reader]) {
      expect(slugsOf({ body: await get(w, '/api/articles?author=renamed2', who) } as TestResponse)).toEqual([created.row.slug, w.slug])
    }
  })

  test('a favorite made under the old name is in the new name’s favorited list, which was cached in between', async () => {
    const w = await world()
    const stale = await renamedAfterTheToken(w, 'renamed3')
    await warm(w, ['/api/articles?favorited=renamed3'])
    expect((await get(w, '/api/articles?favorited=renamed3')).articlesCount).toBe(0)
    await articlesOn(w.app.store).writes.setFavorite(stale, w.otherSlug, true)
    for (const who of [undefined, w.reader]) {
      expect(slugsOf({ body: await get(w, '/api/articles?favorited=renamed3', who) } as TestResponse)).toEqual([w.otherSlug])
    }
    await articlesOn(w.app.store).writes.setFavorite(stale, w.otherSlug, false)
    expect((await get(w, '/api/articles?favorited=renamed3')).articlesCount).toBe(0)
  })

  // PostgreSQL runs writes concurrently: a write may start before a rename commits and end after
  skipIf(why.postgresOnly).test('a write waiting for an uncommitted rename reads the name it commits (PostgreSQL)', async () => {
    const w = await world()
    const { id } = (await w.app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', w.author.username))!
    const stale = { id, username: w.author.username, usernameKey: usernameKey(w.author.username) }
    const holder = await sessionBeside(w.app.db)
    const writes = articlesOn(w.app.store).writes
    let created: ReturnType<typeof writes.create> | undefined
    let favorited: ReturnType<typeof writes.setFavorite> | undefined
    try {
      // a rename as the service makes it: the row locked FOR UPDATE, the name changed, not yet committed
      await holder.begin(async (tx) => {
        await tx`SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`
        await tx`UPDATE users SET username = 'renamed4', username_key = 'renamed4' WHERE id = ${id}`
        created = writes.create(stale, { title: 'Raced', description: 'd', body: 'b' })
        favorited = writes.setFavorite(stale, w.otherSlug, true)
        const waiting = () => lockWaiters(w.app.db)
        for (let i = 0; i < 200 && (await waiting()) < 2; i++) await Bun.sleep(25)
        expect(await waiting()).toBe(2)
      })
    } finally {
      await holder.close()
    }
    expect((await created!).row.username).toBe('renamed4')
    await favorited
    const logged = (await w.app.db.all<{ keys: string }>('SELECT keys FROM changes')).flatMap((r) => fromLog(r.keys))
    expect(logged).toContain(keys.byAuthor('renamed4'))
    expect(logged).toContain(keys.favoritedBy('renamed4'))
  })
})

/**
 * A signed-in reader who favorited none of an answer's articles and follows
 * none of its users is served the anonymous body (src/http/responses.ts). The
 * moment one of their flags would show, they get their own answer again, and
 * no one else ever sees their flags.
 */
describe('signed-in readers share the anonymous answer only while none of their flags shows', () => {
  const shared = (w: World) => [
    '/api/articles',
    `/api/articles/${w.slug}`,
    `/api/articles/${w.slug}/comments`,
    `/api/profiles/${w.author.username}`,
  ]

  test('a reader with no flag on a page keeps no answer of their own; one whose flag shows does', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.slug}/comments`, { token: w.author.token, body: { comment: { body: 'by the author' } } })
    for (const p of shared(w)) await get(w, p)
    const own = () => w.app.app.caches.viewerResponses.size
    const before = own()
    // `other` follows nobody and favorited nothing: the anonymous bodies serve them
    for (let i = 0; i < 2; i++) for (const p of shared(w)) expect(await get(w, p, w.other)).toEqual(await get(w, p))
    expect(own()).toBe(before)
    // `reader` follows the author, shown on each of these answers
    for (let i = 0; i < 2; i++) for (const p of shared(w)) await get(w, p, w.reader)
    expect(own()).toBe(before + shared(w).length)
    expect((await get(w, `/api/articles/${w.slug}`, w.reader)).article.author.following).toBe(true)
    expect((await get(w, `/api/articles/${w.slug}`)).article.author.following).toBe(false)
  })

  test('a favorite, then every shared answer it shows on, caches warm; and back', async () => {
    const w = await world()
    await warm(w, shared(w))
    const favorited = async (who?: RegisteredUser) => [
      (await get(w, `/api/articles/${w.slug}`, who)).article.favorited,
      (await get(w, '/api/articles', who)).articles.find((a: { slug: string }) => a.slug === w.slug).favorited,
    ]
    expect((await w.app.request('POST', `/api/articles/${w.slug}/favorite`, { token: w.other.token })).status).toBe(200)
    expect(await favorited(w.other)).toEqual([true, true])
    for (const who of [undefined, w.reader]) expect(await favorited(who)).toEqual([false, false])
    expect((await get(w, `/api/articles/${w.slug}`)).article.favoritesCount).toBe(1)
    // read again and again: still theirs alone
    expect(await favorited(w.other)).toEqual([true, true])
    expect(await favorited()).toEqual([false, false])
    expect((await w.app.request('DELETE', `/api/articles/${w.slug}/favorite`, { token: w.other.token })).status).toBe(200)
    for (const who of [undefined, w.reader, w.other]) expect(await favorited(who)).toEqual([false, false])
    expect(await get(w, `/api/articles/${w.slug}`, w.other)).toEqual(await get(w, `/api/articles/${w.slug}`))
  })

  test('a follow, then every shared answer it shows on, caches warm; and back', async () => {
    const w = await world()
    await w.app.request('POST', `/api/articles/${w.slug}/comments`, { token: w.author.token, body: { comment: { body: 'by the author' } } })
    await warm(w, shared(w))
    const following = async (who?: RegisteredUser) => [
      (await get(w, `/api/articles/${w.slug}`, who)).article.author.following,
      (await get(w, '/api/articles', who)).articles.find((a: { slug: string }) => a.slug === w.slug).author.following,
      (await get(w, `/api/articles/${w.slug}/comments`, who)).comments[0].author.following,
      (await get(w, `/api/profiles/${w.author.username}`, who)).profile.following,
    ]
    await follow(w.app, w.other.token, w.author.username)
    expect(await following(w.other)).toEqual([true, true, true, true])
    expect(await following()).toEqual([false, false, false, false])
    expect(await following(w.other)).toEqual([true, true, true, true])
    expect((await w.app.request('DELETE', `/api/profiles/${w.author.username}/follow`, { token: w.other.token })).status).toBe(200)
    expect(await following(w.other)).toEqual([false, false, false, false])
    expect(await following()).toEqual([false, false, false, false])
    expect(await following(w.reader)).toEqual([true, true, true, true])
  })

  test('the feed is never shared: an empty feed is its viewer’s, anonymous readers still get 401', async () => {
    const w = await world()
    for (let i = 0; i < 2; i++) expect((await get(w, '/api/articles/feed', w.other)).articlesCount).toBe(0)
    for (let i = 0; i < 2; i++) expect((await w.app.request('GET', '/api/articles/feed')).status).toBe(401)
    expect((await get(w, '/api/articles/feed', w.reader)).articlesCount).toBe(1)
    expect((await w.app.request('GET', '/api/articles/feed?limit=5')).status).toBe(401)
  })
})

/**
 * The plain newest-first pages within the first NEWEST_WINDOW articles are
 * sliced from one cached read (src/articles/reads.ts): each write that
 * shifts that list shifts every page, inside the window, across its edge
 * and beyond it, exactly as the database orders them.
 */
describe('the newest-first window: a write, then every page of the list, caches warm', () => {
  test('a new article and a deletion shift every page, inside, across and past the window', async () => {
    const app = await conduitApp()
    await seedDatabase(app.store.bulk, {
      users: 20,
      articles: NEWEST_WINDOW + 150,
      tags: 10,
      follows: 2,
      favoritesPerArticle: 0.2,
      commentsPerArticle: 0,
      seed: 4,
      passwordHash: 'x',
    })
    const [writer] = await registerUsers(app, 1)
    const pages = [
      [20, 0],
      [20, 20],
      [10, 500],
      [20, NEWEST_WINDOW - 20],
      [5, NEWEST_WINDOW - 5],
      [20, NEWEST_WINDOW - 10],
      [20, NEWEST_WINDOW],
      [20, NEWEST_WINDOW + 140],
      [20, NEWEST_WINDOW + 160],
    ]
    const url = ([limit, offset]: number[]) => `/api/articles?limit=${limit}&offset=${offset}`
    const read = async (p: number[], token?: string) => {
      const res = await app.request('GET', url(p), token ? { token } : {})
      expect(res.status).toBe(200)
      return { slugs: slugsOf(res), count: res.body.articlesCount }
    }
    // the database's own order, read past every cache
    const truth = async ([limit, offset]: number[]) => ({
      slugs: (
        await app.db.all<{ slug: string }>('SELECT slug FROM articles ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?', limit, offset)
      ).map((r) => r.slug),
      count: await app.db.count('SELECT count(*) FROM articles'),
    })
    const check = async () => {
      for (const p of pages) {
        const want = await truth(p)
        expect({ page: p, ...(await read(p)) }).toEqual({ page: p, ...want })
        expect({ page: p, ...(await read(p, writer!.token)) }).toEqual({ page: p, ...want })
      }
    }
    for (let i = 0; i < 2; i++) await check()
    const { slug } = await createArticle(app, writer!.token, { title: 'Newest of all' })
    expect((await read([20, 0])).slugs[0]).toBe(slug)
    await check()
    expect((await app.request('DELETE', `/api/articles/${slug}`, { token: writer!.token })).status).toBe(204)
    await check()
  })
})

/**
 * Instances keep reading the change log from the snapshot they last saw. A
 * database swapped behind the same address (a restored dump, a switch to a
 * server of another history) has transaction ids below that snapshot's: its
 * log cannot be placed after it, so everything cached is dropped.
 */
skipIf(why.postgresOnly).test(
  'a server whose transaction ids are behind the last snapshot read drops every cache (PostgreSQL)',
  async () => {
    const w = await world()
    expect((await get(w, `/api/profiles/${w.author.username}`)).profile.bio).toBeNull()
    // as if the instance had last read a server whose ids ran far ahead of this one's
    const changes = w.app.store.changes as unknown as { last: { xmax: string; xip: string } }
    changes.last = { ...changes.last, xmax: String(BigInt(changes.last.xmax) + 1_000_000_000n) }
    // a change on "this" server, by hand: logged, below that snapshot
    await w.app.db.run('UPDATE users SET bio = ? WHERE username = ?', 'written on the other server', w.author.username)
    expect((await get(w, `/api/profiles/${w.author.username}`)).profile.bio).toBe('written on the other server')
  },
)
