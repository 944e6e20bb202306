import { expect, test } from 'bun:test'
import { articleJson, articleParts, byCodePoint } from '../../src/articles/present.ts'
import { profileHead } from '../../src/profiles/present.ts'
import { conduitApp, registerUsers } from '../support/conduit.ts'
import { createArticle } from '../support/fixtures.ts'
import { skipIf, why } from '../support/skip.ts'

skipIf(why.sqlitePass).describe('byCodePoint', () => {
  test('orders by code point, as SQLite compares UTF-8, not by UTF-16 unit', () => {
    // U+FF5E is a single unit above the surrogates of U+1F600, but a smaller code point
    expect(['😀', '～', 'b', 'a', 'ab'].sort(byCodePoint)).toEqual(['a', 'ab', 'b', '～', '😀'])
    expect(['😀b', '😀a'].sort(byCodePoint)).toEqual(['😀a', '😀b'])
  })
})

skipIf(why.sqlitePass).describe('articleParts', () => {
  const row = {
    id: 1,
    author_id: 2,
    slug: 's',
    title: 'A "quoted" title',
    description: 'd',
    body: 'line\nbreak',
    created_at: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    updated_at: Date.UTC(2026, 0, 2, 3, 4, 5, 679),
    favorites_count: 3,
    username: 'jake',
    bio: null,
    image: 'https://x.io/a.png',
    tags: ['training', 'dragons'],
  }

  test('splice the viewer flags into valid JSON of the contract shape', () => {
    const json = JSON.parse(articleJson(articleParts(row), profileHead(row), true, false))
    expect(json).toEqual({
      slug: 's',
      title: 'A "quoted" title',
      description: 'd',
      body: 'line\nbreak',
      tagList: ['dragons', 'training'],
      createdAt: '2026-01-02T03:04:05.678Z',
      updatedAt: '2026-01-02T03:04:05.679Z',
      favorited: true,
      favoritesCount: 3,
      author: { username: 'jake', bio: null, image: 'https://x.io/a.png', following: false },
    })
  })

  test('leave out the body when the row has none, and give [] for no tags', () => {
    const { body: _, ...listRow } = row
    const json = JSON.parse(articleJson(articleParts({ ...listRow, tags: [] }), profileHead(listRow), false, true))
    expect('body' in json).toBe(false)
    expect(json.tagList).toEqual([])
    expect(json.author.following).toBe(true)
  })

  test('through HTTP, tags come back in code-point order', async () => {
    const app = await conduitApp()
    const [jake] = await registerUsers(app, 1)
    const article = await createArticle(app, jake!.token, { tagList: ['😀', '～', 'z'] })
    expect(article.tagList).toEqual(['z', '～', '😀'])
    const listed = await app.request('GET', '/api/articles')
    expect(listed.body.articles[0].tagList).toEqual(['z', '～', '😀'])
  })
})
