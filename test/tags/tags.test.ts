import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../support/app.ts'
import { conduitApp } from '../support/conduit.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'

const tags = async (app: TestApp) => {
  const res = await app.request('GET', '/api/tags')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
  return res.body.tags as string[]
}

describe('GET /api/tags', () => {
  test('is empty when no article carries a tag', async () => {
    const app = await conduitApp()
    expect(await tags(app)).toEqual([])
    const jake = await registerUser(app)
    await createArticle(app, jake.token)
    expect(await tags(app)).toEqual([])
  })

  test('shows a new tag to a reader who listed the tags before', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    expect(await tags(app)).toEqual([])
    await createArticle(app, jake.token, { tagList: ['fresh'] })
    expect(await tags(app)).toEqual(['fresh'])
  })

  test('lists each tag once, most used first, ties in ascending code-point order', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { tagList: ['dragons', 'training', 'beta'] })
    await createArticle(app, jake.token, { tagList: ['dragons', 'training', 'Zeta'] })
    await createArticle(app, jake.token, { tagList: ['dragons', 'alpha', '\u{1F600}', '\uff5e'] })
    // 3: dragons; 2: training; 1 each, by code point: 'Zeta' < 'alpha' < 'beta' < U+FF5E < U+1F600
    expect(await tags(app)).toEqual(['dragons', 'training', 'Zeta', 'alpha', 'beta', '\uff5e', '\u{1F600}'])
  })

  test('needs no token and still answers with one', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { tagList: ['x'] })
    const res = await app.request('GET', '/api/tags', { token: jake.token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ tags: ['x'] })
  })

  test('drops a tag when its last article is deleted, and reorders the rest', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const a = await createArticle(app, jake.token, { tagList: ['solo', 'shared', 'b'] })
    await createArticle(app, jake.token, { tagList: ['shared', 'a'] })
    await createArticle(app, jake.token, { tagList: ['b'] })
    expect(await tags(app)).toEqual(['b', 'shared', 'a', 'solo'])

    const res = await app.request('DELETE', `/api/articles/${a.slug}`, { token: jake.token })
    expect(res.status).toBe(204)
    // now every tag is used once: plain ascending order
    expect(await tags(app)).toEqual(['a', 'b', 'shared'])
  })

  test('drops a tag when the tags of its last article are replaced', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { tagList: ['old', 'kept'] })
    await createArticle(app, jake.token, { tagList: ['kept'] })
    const res = await app.request('PUT', `/api/articles/${slug}`, { token: jake.token, body: { article: { tagList: ['kept', 'new'] } } })
    expect(res.status).toBe(200)
    expect(await tags(app)).toEqual(['kept', 'new'])
  })

  test('drops every tag of an article whose tagList is emptied, and brings one back when reused', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { tagList: ['x', 'y'] })
    const cleared = await app.request('PUT', `/api/articles/${slug}`, { token: jake.token, body: { article: { tagList: [] } } })
    expect(cleared.status).toBe(200)
    expect(await tags(app)).toEqual([])
    await createArticle(app, jake.token, { tagList: ['y'] })
    expect(await tags(app)).toEqual(['y'])
  })

  test('keeps a tag counted once per article however often a request repeats it', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { tagList: ['many', 'many', ' many '] })
    await createArticle(app, jake.token, { tagList: ['b'] })
    await createArticle(app, jake.token, { tagList: ['b'] })
    // 'many' is on one article, 'b' on two
    expect(await tags(app)).toEqual(['b', 'many'])
  })
})
