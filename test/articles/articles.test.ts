import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../support/app.ts'
import { addComment, conduitApp, favorite, follow, ISO_MS, JSON_TYPE, listArticles, registerUsers } from '../support/conduit.ts'
import { createArticle, expectTokenRefused, registerUser } from '../support/fixtures.ts'

const valid = { title: 'A title', description: 'A description', body: 'A body' }
const post = (app: TestApp, token: string, article: unknown) => app.request('POST', '/api/articles', { token, body: { article } })
const put = (app: TestApp, token: string, slug: string, article: unknown) =>
  app.request('PUT', `/api/articles/${slug}`, { token, body: { article } })
const distinctTags = (n: number, length = 3) => Array.from({ length: n }, (_, i) => `t${i}`.padEnd(length, 'x'))

describe('POST /api/articles', () => {
  test('creates an article and answers 201 with the whole article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const before = Date.now()
    const res = await post(app, jake.token, {
      title: 'How to train your dragon',
      description: 'Ever wonder how?',
      body: 'You have to believe',
      tagList: ['training', 'dragons', 'training'],
    })
    const after = Date.now()

    expect(res.status).toBe(201)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.body).toEqual({
      article: {
        slug: 'how-to-train-your-dragon',
        title: 'How to train your dragon',
        description: 'Ever wonder how?',
        body: 'You have to believe',
        tagList: ['dragons', 'training'],
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: expect.stringMatching(ISO_MS),
        favorited: false,
        favoritesCount: 0,
        author: { username: jake.username, bio: null, image: null, following: false },
      },
    })
    const { createdAt, updatedAt } = res.body.article
    expect(updatedAt).toBe(createdAt)
    expect(new Date(createdAt).toISOString()).toBe(createdAt)
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(after)
  })

  test('answers a creation as a read of the new article answers it, on the first and on a suffixed slug', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const profile = { bio: 'I work at statefarm', image: 'https://example.com/jake.png' }
    expect((await app.request('PUT', '/api/user', { token: jake.token, body: { user: profile } })).status).toBe(200)
    // a tag another article has already, a new one, and one repeated
    expect((await post(app, jake.token, { ...valid, title: 'Earlier', tagList: ['dragons'] })).status).toBe(201)
    const article = { title: 'Same title', description: 'd', body: 'b\n', tagList: ['zebras', 'dragons', 'zebras'] }
    for (const slug of ['same-title', 'same-title-2']) {
      const created = await post(app, jake.token, article)
      expect(created.status).toBe(201)
      expect(created.body.article.slug).toBe(slug)
      expect(created.body.article.author).toEqual({ username: jake.username, ...profile, following: false })
      expect(created.body.article.tagList).toEqual(['dragons', 'zebras'])
      const read = await app.request('GET', `/api/articles/${slug}`, { token: jake.token })
      expect(read.body).toEqual(created.body)
    }
  })

  test('trims tags, drops blank and repeated ones and sorts them in code-point order', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await post(app, jake.token, {
      ...valid,
      tagList: [' dragons ', 'training', '', '   ', '\u200b', '\u3164', 'dragons', 'Zebra', 'apple', '\uff5e', '\u{1F600}'],
    })
    expect(res.status).toBe(201)
    // code-point order: 'Z' < 'a', and U+FF5E < U+1F600 (UTF-16 order would put the emoji first)
    expect(res.body.article.tagList).toEqual(['Zebra', 'apple', 'dragons', 'training', '\uff5e', '\u{1F600}'])
  })

  test('treats a missing tagList as no tags, and refuses a null one (422), creating nothing', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const asNull = await post(app, jake.token, { ...valid, tagList: null })
    expect(asNull.status).toBe(422)
    expect(asNull.body).toEqual({ errors: { tagList: ['must be an array'] } })
    expect(await app.db.count('SELECT count(*) FROM articles')).toBe(0)
    const missing = await post(app, jake.token, valid)
    expect(missing.status).toBe(201)
    expect(missing.body.article.tagList).toEqual([])
  })

  test('stores the body exactly as sent: a Markdown code block and a trailing line break survive', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const body = '    indented code\n\nline one  \nline two\n'
    const res = await post(app, jake.token, { ...valid, body })
    expect(res.status).toBe(201)
    expect(res.body.article.body).toBe(body)
    const read = await app.request('GET', `/api/articles/${res.body.article.slug}`)
    expect(read.body.article.body).toBe(body)
  })

  test('refuses a tag with a control character (U+001F, a tab inside), on create and update; changes nothing', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const refused = { errors: { tagList: ['must not contain control characters'] } }
    for (const tag of ['a\u001fb', 'x\u001f', 'tab\tinside', 'del\u007f', 'c1\u0085']) {
      const res = await post(app, jake.token, { ...valid, tagList: ['solo', tag] })
      expect({ tag, status: res.status, body: res.body }).toEqual({ tag, status: 422, body: refused })
    }
    expect((await app.request('GET', '/api/articles')).body.articlesCount).toBe(0)
    const made = await post(app, jake.token, { ...valid, tagList: ['solo', ' padded\t'] })
    expect(made.body.article.tagList).toEqual(['padded', 'solo'])
    const slug = made.body.article.slug
    const update = await app.request('PUT', `/api/articles/${slug}`, { token: jake.token, body: { article: { tagList: ['a\u001fb'] } } })
    expect({ status: update.status, body: update.body }).toEqual({ status: 422, body: refused })
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.tagList).toEqual(['padded', 'solo'])
  })

  test('refuses U+0000 in any stored text with a 422 naming the field, on every backend', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    for (const field of ['title', 'description', 'body'] as const) {
      const res = await post(app, jake.token, { ...valid, [field]: 'nul \u0000 inside' })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { [field]: ['must not contain the NUL character'] } })
    }
    const tagged = await post(app, jake.token, { ...valid, tagList: ['a\u0000b'] })
    expect(tagged.body).toEqual({ errors: { tagList: ['must not contain the NUL character'] } })
    expect((await app.request('GET', '/api/articles')).body.articlesCount).toBe(0)
    // and a lookup by a name with U+0000 finds nothing, without an error
    expect((await app.request('GET', '/api/articles/a%00b')).status).toBe(404)
    expect((await app.request('GET', '/api/articles?tag=a%00b')).body).toEqual({ articles: [], articlesCount: 0 })
  })

  test('stores the title trimmed', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await post(app, jake.token, { ...valid, title: '  Spaced out  ' })
    expect(res.status).toBe(201)
    expect(res.body.article.title).toBe('Spaced out')
    expect(res.body.article.slug).toBe('spaced-out')
  })

  test('ignores fields a client may not set', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const before = Date.now()
    const res = await app.request('POST', '/api/articles', {
      token: jake.token,
      body: {
        article: {
          ...valid,
          slug: 'chosen-by-client',
          favorited: true,
          favoritesCount: 99,
          createdAt: '2000-01-01T00:00:00.000Z',
          author: { username: 'someone-else' },
        },
        extra: 'ignored',
      },
    })
    expect(res.status).toBe(201)
    expect(res.body.article).toMatchObject({ slug: 'a-title', favorited: false, favoritesCount: 0 })
    expect(res.body.article.author.username).toBe(jake.username)
    expect(Date.parse(res.body.article.createdAt)).toBeGreaterThanOrEqual(before)
  })

  test('accepts every field at its longest allowed length and 20 tags of 40 characters', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const tagList = distinctTags(20, 40)
    const res = await post(app, jake.token, {
      title: 't'.repeat(200),
      description: 'd'.repeat(1000),
      body: 'b'.repeat(100_000),
      tagList,
    })
    expect(res.status).toBe(201)
    expect(res.body.article.title).toBe('t'.repeat(200))
    expect(res.body.article.description).toBe('d'.repeat(1000))
    expect(res.body.article.body).toBe('b'.repeat(100_000))
    expect(res.body.article.tagList).toEqual([...tagList].sort())
  })

  test('applies the limits after trimming, removing duplicates and dropping blank tags', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const tags = distinctTags(20)
    const res = await post(app, jake.token, {
      title: `  ${'t'.repeat(200)}  `,
      description: valid.description,
      body: valid.body,
      // 26 entries, 20 distinct tags once trimmed; the 40-character tag has surrounding spaces
      tagList: [...tags.slice(0, 19), ...tags.slice(0, 5), '', '  ', ` ${'x'.repeat(40)} `],
    })
    expect(res.status).toBe(201)
    expect(res.body.article.tagList).toHaveLength(20)
    expect(res.body.article.tagList).toContain('x'.repeat(40))
  })

  test('counts characters, not UTF-16 code units, in the title limit', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    // U+20000 is one character (a CJK ideograph) but two UTF-16 code units
    const res = await post(app, jake.token, { ...valid, title: '\u{20000}'.repeat(200) })
    expect(res.status).toBe(201)
    expect(res.body.article.title).toBe('\u{20000}'.repeat(200))
  })

  test('counts characters, not UTF-16 code units, in the tag limit', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await post(app, jake.token, { ...valid, tagList: ['\u{20000}'.repeat(40)] })
    expect(res.status).toBe(201)
    expect(res.body.article.tagList).toEqual(['\u{20000}'.repeat(40)])
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const res = await app.request('POST', '/api/articles', { body: { article: valid } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
  })

  test('answers 401 for an invalid token before looking at the body', async () => {
    const app = await conduitApp()
    const res = await app.request('POST', '/api/articles', { token: 'not.a.jwt', body: { article: {} } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is invalid'] } })
  })

  describe('validation', () => {
    test('reports every failing field at once', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, {
        title: '   ',
        description: 'd'.repeat(1001),
        body: 'b'.repeat(100_001),
        tagList: distinctTags(21),
      })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({
        errors: {
          title: ["can't be blank"],
          description: [expect.stringMatching(/too long/)],
          body: [expect.stringMatching(/too long/)],
          tagList: [expect.stringMatching(/too many/)],
        },
      })
      expect((await listArticles(app)).body.articlesCount).toBe(0)
    })

    test('reports all three required fields when they are missing', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, {})
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { title: ["can't be blank"], description: ["can't be blank"], body: ["can't be blank"] } })
    })

    test.each(['title', 'description', 'body'])('answers 422 for a blank %s', async (field) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      // and what shows nothing: zero-width characters, a Hangul filler (a letter), the Braille blank
      for (const blank of ['', '  \n\t ', '\u200b', ' \u3164 ', '\u2800\u2060', '\u115f\ufeff']) {
        const res = await post(app, jake.token, { ...valid, [field]: blank })
        expect(res.status).toBe(422)
        expect(res.body).toEqual({ errors: { [field]: ["can't be blank"] } })
      }
    })

    test.each([
      ['title', 201],
      ['description', 1001],
      ['body', 100_001],
    ] as const)('answers 422 for a %s of %i characters', async (field, length) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, { ...valid, [field]: 'x'.repeat(length) })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { [field]: [expect.stringMatching(/too long/)] } })
    })

    test('answers 422 for more than 20 distinct tags', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, { ...valid, tagList: distinctTags(21) })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { tagList: [expect.stringMatching(/too many/)] } })
    })

    test('answers 422 for a tag longer than 40 characters once trimmed', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, { ...valid, tagList: ['fine', ` ${'x'.repeat(41)} `] })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { tagList: [expect.stringMatching(/too long/)] } })
    })

    test.each([
      ['title', 'a number', 5],
      ['title', 'null', null],
      ['description', 'a boolean', true],
      ['description', 'an array', ['a']],
      ['body', 'an object', { text: 'x' }],
      ['tagList', 'a string', 'dragons'],
      ['tagList', 'an object', { a: 'b' }],
      ['tagList', 'a list with a number', ['ok', 7]],
      ['tagList', 'a list with null', [null]],
    ])('answers 422 when %s is %s', async (field, _, value) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, { ...valid, [field]: value })
      expect(res.status).toBe(422)
      expect(Object.keys(res.body.errors)).toEqual([field])
      expect(res.body.errors[field]).toEqual([expect.any(String)])
    })

    test('reports every field of the wrong type at once', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, { title: 1, description: false, body: [], tagList: 'x' })
      expect(res.status).toBe(422)
      expect(Object.keys(res.body.errors).sort()).toEqual(['body', 'description', 'tagList', 'title'])
    })

    test('answers 422 when the article wrapper is missing', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await app.request('POST', '/api/articles', { token: jake.token, body: {} })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { article: ["can't be blank"] } })
    })

    test.each([
      ['unwrapped', valid],
      ['under a misspelt wrapper', { articles: valid }],
    ])('names only the missing wrapper when the fields are sent %s', async (_, body) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      // the fields beside the missing wrapper are unknown extra fields: ignored, not reported as invalid
      const res = await app.request('POST', '/api/articles', { token: jake.token, body })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { article: ["can't be blank"] } })
    })

    test.each([
      ['a string', 'x'],
      ['a number', 3],
      ['an array', [valid]],
      ['null', null],
    ])('answers 422 naming the article wrapper when it is %s', async (_, article) => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await post(app, jake.token, article)
      expect(res.status).toBe(422)
      expect(Object.keys(res.body.errors)).toContain('article')
      expect((await listArticles(app)).body.articlesCount).toBe(0)
    })

    test('answers 422 for an empty body or a JSON value that is not an object', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      for (const body of ['', 'null', '[]', '5', '"article"']) {
        const res = await app.request('POST', '/api/articles', { token: jake.token, body })
        expect(res.status).toBe(422)
        expect(Object.keys(res.body.errors).length).toBeGreaterThan(0)
      }
      expect((await listArticles(app)).body.articlesCount).toBe(0)
    })

    test('answers 400 for a body that is not UTF-8, and stores nothing', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const json = '{"article":{"title":"Raw bytes RAW","description":"d","body":"b"}}'
      const at = json.indexOf('RAW')
      const bytes = new Uint8Array([...Buffer.from(json.slice(0, at)), 0xff, 0xc0, 0xaf, ...Buffer.from(json.slice(at + 3))])
      const res = await app.request('POST', '/api/articles', { token: jake.token, body: bytes })
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { errors: { body: ['is not valid JSON'] } } })
      expect((await listArticles(app)).body.articlesCount).toBe(0)
    })

    test('answers 400 for malformed JSON', async () => {
      const app = await conduitApp()
      const jake = await registerUser(app)
      const res = await app.request('POST', '/api/articles', { token: jake.token, body: '{"article": {"title": "x",' })
      expect(res.status).toBe(400)
      expect(res.headers.get('content-type')).toBe(JSON_TYPE)
      expect(res.body).toEqual({ errors: { body: ['is not valid JSON'] } })
    })
  })
})

describe('GET /api/articles/:slug', () => {
  test('returns the article to an anonymous caller', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token, { title: 'Readable', tagList: ['b', 'a'] })
    const res = await app.request('GET', '/api/articles/readable')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.body).toEqual({ article: created })
  })

  test('shows favorited and author.following from the caller’s view', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    await follow(app, jane!.token, jake!.username)
    await favorite(app, jane!.token, slug)

    const asJane = await app.request('GET', `/api/articles/${slug}`, { token: jane!.token })
    expect(asJane.status).toBe(200)
    expect(asJane.body.article).toMatchObject({ favorited: true, favoritesCount: 1, author: { following: true } })

    const asJake = await app.request('GET', `/api/articles/${slug}`, { token: jake!.token })
    expect(asJake.body.article).toMatchObject({ favorited: false, favoritesCount: 1, author: { following: false } })

    const anonymous = await app.request('GET', `/api/articles/${slug}`)
    expect(anonymous.body.article).toMatchObject({ favorited: false, favoritesCount: 1, author: { following: false } })
  })

  test('returns 404 for an unknown slug', async () => {
    const app = await conduitApp()
    const res = await app.request('GET', '/api/articles/no-such-article')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('matches the slug exactly', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { title: 'Exact match' })
    expect((await app.request('GET', '/api/articles/exact-match')).status).toBe(200)
    for (const near of ['Exact-Match', 'exact-match-', 'exact', 'exact-match-2']) {
      const res = await app.request('GET', `/api/articles/${near}`)
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ errors: { article: ['not found'] } })
    }
  })

  test('finds a slug in another script through its percent-encoded path', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token, { title: '日本語の記事' })
    expect(created.slug).toBe('日本語の記事')
    const res = await app.request('GET', `/api/articles/${encodeURIComponent(created.slug)}`)
    expect(res.status).toBe(200)
    expect(res.body.article.slug).toBe('日本語の記事')
  })

  test('reads an invalid token as no token, and says so: the route is public', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    await app.request('POST', `/api/articles/${slug}/favorite`, { token: jake.token })
    await expectTokenRefused(app, `Token ${jake.token}x`, [`/api/articles/${slug}`])
  })
})

describe('PUT /api/articles/:slug', () => {
  test('lets the author retitle an article: new slug, old slug 404, updatedAt moves', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const before = await createArticle(app, jake.token, { title: 'First draft', tagList: ['x'] })

    const res = await put(app, jake.token, before.slug, { title: 'Final version' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      article: {
        ...before,
        slug: 'final-version',
        title: 'Final version',
        updatedAt: expect.stringMatching(ISO_MS),
      },
    })
    expect(Date.parse(res.body.article.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt))

    const old = await app.request('GET', '/api/articles/first-draft')
    expect(old.status).toBe(404)
    expect(old.body).toEqual({ errors: { article: ['not found'] } })
    const now = await app.request('GET', '/api/articles/final-version')
    expect(now.status).toBe(200)
    expect(now.body).toEqual(res.body)
  })

  test('changes only the fields it is given', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const before = await createArticle(app, jake.token, { title: 'Stable', tagList: ['keep'] })
    const res = await put(app, jake.token, before.slug, { body: '  New body  ', description: 'New description' })
    expect(res.status).toBe(200)
    expect(res.body.article).toEqual({
      ...before,
      body: '  New body  ',
      description: 'New description',
      updatedAt: expect.stringMatching(ISO_MS),
    })
  })

  test('stores an edited body exactly as sent, and refuses a blank one', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const markdown = '    const x = 1\n\nends with a line break  '
    const res = await put(app, jake.token, slug, { body: markdown })
    expect(res.status).toBe(200)
    expect(res.body.article.body).toBe(markdown)
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.body).toBe(markdown)
    const blank = await put(app, jake.token, slug, { body: ' \n\t ' })
    expect(blank.status).toBe(422)
    expect(blank.body).toEqual({ errors: { body: ["can't be blank"] } })
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.body).toBe(markdown)
  })

  test('replaces the tag set with the given tagList', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { tagList: ['a', 'b'] })
    const res = await put(app, jake.token, slug, { tagList: [' c ', 'b', 'c', ''] })
    expect(res.status).toBe(200)
    expect(res.body.article.tagList).toEqual(['b', 'c'])
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.tagList).toEqual(['b', 'c'])
  })

  test('clears the tags with an empty tagList', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { tagList: ['a', 'b'] })
    const res = await put(app, jake.token, slug, { tagList: [] })
    expect(res.status).toBe(200)
    expect(res.body.article.tagList).toEqual([])
  })

  test('refuses a null tagList (422) and changes nothing; a tagList left out keeps the tags', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token, { tagList: ['a', 'b'] })
    const refused = await put(app, jake.token, created.slug, { tagList: null, body: 'changed' })
    expect(refused.status).toBe(422)
    expect(refused.body).toEqual({ errors: { tagList: ['must be an array'] } })
    expect((await app.request('GET', `/api/articles/${created.slug}`)).body.article).toEqual(created)
    const kept = await put(app, jake.token, created.slug, { body: 'changed' })
    expect(kept.status).toBe(200)
    expect(kept.body.article.tagList).toEqual(['a', 'b'])
  })

  test('moves updatedAt on every update, even one that sends the same values', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token)
    let last = created.updatedAt
    for (let i = 0; i < 3; i++) {
      const res = await put(app, jake.token, created.slug, { body: created.body })
      expect(res.status).toBe(200)
      expect(res.body.article.createdAt).toBe(created.createdAt)
      expect(Date.parse(res.body.article.updatedAt)).toBeGreaterThan(Date.parse(last))
      last = res.body.article.updatedAt
    }
  })

  test('refuses an update that names no field it knows (as the user’s: at least one), and changes nothing', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token)
    for (const body of [{}, { slug: 'other' }, { favoritesCount: 3 }]) {
      const res = await put(app, jake.token, created.slug, body)
      expect({ body, status: res.status, answer: res.body }).toEqual({
        body,
        status: 422,
        answer: { errors: { article: ['must have at least one field'] } },
      })
    }
    expect((await app.request('GET', `/api/articles/${created.slug}`)).body.article).toEqual(created)
  })

  test('keeps the slug when the new title gives the same slug', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { title: 'Hello world' })
    const res = await put(app, jake.token, slug, { title: 'HELLO, World!' })
    expect(res.status).toBe(200)
    expect(res.body.article).toMatchObject({ slug: 'hello-world', title: 'HELLO, World!' })
    expect((await app.request('GET', '/api/articles/hello-world-2')).status).toBe(404)
  })

  test('shows the change to a reader who read the article before', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token, { body: 'Old body', tagList: ['old'] })
    for (const token of [undefined, jane!.token]) {
      expect((await app.request('GET', `/api/articles/${slug}`, token ? { token } : {})).body.article.body).toBe('Old body')
    }
    expect((await put(app, jake!.token, slug, { body: 'New body', tagList: ['new'] })).status).toBe(200)
    for (const token of [undefined, jane!.token]) {
      const res = await app.request('GET', `/api/articles/${slug}`, token ? { token } : {})
      expect(res.body.article).toMatchObject({ body: 'New body', tagList: ['new'] })
    }
  })

  test('gives the next free slug when the new title’s slug is taken', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { title: 'Hello' })
    const other = await createArticle(app, jake.token, { title: 'World' })
    const res = await put(app, jake.token, other.slug, { title: 'Hello!' })
    expect(res.status).toBe(200)
    expect(res.body.article.slug).toBe('hello-2')
    expect((await app.request('GET', '/api/articles/hello')).body.article.title).toBe('Hello')
    expect((await app.request('GET', '/api/articles/world')).status).toBe(404)
  })

  test('derives the new slug from the new title even when the old slug ended in a number', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { title: 'Release 2' })
    expect(slug).toBe('release-2')
    const res = await put(app, jake.token, slug, { title: 'Release' })
    expect(res.status).toBe(200)
    expect(res.body.article.slug).toBe('release')
    expect((await app.request('GET', '/api/articles/release-2')).status).toBe(404)
  })

  test('answers 403 to another user and leaves the article unchanged', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const created = await createArticle(app, jake!.token, { title: 'Mine' })
    const res = await put(app, jane!.token, created.slug, { title: 'Stolen', body: 'Overwritten' })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ errors: { article: ['forbidden'] } })
    expect((await app.request('GET', '/api/articles/mine')).body.article).toEqual(created)
    expect((await app.request('GET', '/api/articles/stolen')).status).toBe(404)
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token)
    const res = await app.request('PUT', `/api/articles/${created.slug}`, { body: { article: { title: 'x' } } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect((await app.request('GET', `/api/articles/${created.slug}`)).body.article).toEqual(created)
  })

  test('answers 404 for an unknown slug', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await put(app, jake.token, 'no-such-article', { title: 'x' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('reports every failing field at once and changes nothing', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const created = await createArticle(app, jake.token)
    const res = await put(app, jake.token, created.slug, {
      title: ' ',
      description: 'd'.repeat(1001),
      body: 5,
      tagList: distinctTags(21),
    })
    expect(res.status).toBe(422)
    expect(Object.keys(res.body.errors).sort()).toEqual(['body', 'description', 'tagList', 'title'])
    expect(res.body.errors.title).toEqual(["can't be blank"])
    expect((await app.request('GET', `/api/articles/${created.slug}`)).body.article).toEqual(created)
  })

  test('answers 422 for a tag longer than 40 characters or a title over 200', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await put(app, jake.token, slug, { title: 'x'.repeat(201), tagList: ['y'.repeat(41)] })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({
      errors: { title: [expect.stringMatching(/too long/)], tagList: [expect.stringMatching(/too long/)] },
    })
  })

  test('answers 422 without the article wrapper', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('PUT', `/api/articles/${slug}`, { token: jake.token, body: { title: 'Unwrapped' } })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { article: ["can't be blank"] } })
  })

  test('answers 400 for malformed JSON', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('PUT', `/api/articles/${slug}`, { token: jake.token, body: '{"article":' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ errors: { body: ['is not valid JSON'] } })
  })
})

describe('DELETE /api/articles/:slug', () => {
  test('lets the author delete an article: 204 with an empty body, then 404', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
    const res = await app.request('DELETE', `/api/articles/${slug}`, { token: jake.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    const gone = await app.request('GET', `/api/articles/${slug}`)
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ errors: { article: ['not found'] } })
    const again = await app.request('DELETE', `/api/articles/${slug}`, { token: jake.token })
    expect(again.status).toBe(404)
  })

  test('deletes the article’s comments, favorites and tag links, and nothing else', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const doomed = await createArticle(app, jake!.token, { title: 'Doomed', tagList: ['only-here', 'shared'] })
    const kept = await createArticle(app, jake!.token, { title: 'Kept', tagList: ['shared'] })
    for (const a of [doomed, kept]) {
      await addComment(app, jane!.token, a.slug)
      await favorite(app, jane!.token, a.slug)
    }
    const row = async (slug: string) => (await app.db.get<{ id: number }>('SELECT id FROM articles WHERE slug = ?', slug))!.id
    const doomedId = await row(doomed.slug)
    const keptId = await row(kept.slug)

    const res = await app.request('DELETE', `/api/articles/${doomed.slug}`, { token: jake!.token })
    expect(res.status).toBe(204)

    // through the API
    expect((await app.request('GET', `/api/articles/${doomed.slug}/comments`)).status).toBe(404)
    const favorited = await listArticles(app, [['favorited', jane!.username]])
    expect(favorited.body.articles.map((a: { slug: string }) => a.slug)).toEqual([kept.slug])
    expect(favorited.body.articlesCount).toBe(1)
    const onlyHere = await listArticles(app, [['tag', 'only-here']])
    expect(onlyHere.body).toEqual({ articles: [], articlesCount: 0 })
    expect((await listArticles(app, [['tag', 'shared']])).body.articlesCount).toBe(1)
    expect((await app.request('GET', '/api/tags')).body).toEqual({ tags: ['shared'] })
    expect((await app.request('GET', `/api/articles/${kept.slug}/comments`)).body.comments).toHaveLength(1)

    // in the database
    const count = (table: string, id: number) => app.db.count(`SELECT count(*) FROM ${table} WHERE article_id = ?`, id)
    for (const table of ['comments', 'favorites', 'article_tags']) {
      expect({ table, rows: await count(table, doomedId) }).toEqual({ table, rows: 0 })
      expect({ table, rows: await count(table, keptId) }).toEqual({ table, rows: 1 })
    }
    expect(await app.db.count('SELECT count(*) FROM articles WHERE id = ?', doomedId)).toBe(0)
  })

  test('answers 403 to another user and keeps the article', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const created = await createArticle(app, jake!.token)
    const res = await app.request('DELETE', `/api/articles/${created.slug}`, { token: jane!.token })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ errors: { article: ['forbidden'] } })
    expect((await app.request('GET', `/api/articles/${created.slug}`)).body.article).toEqual(created)
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('DELETE', `/api/articles/${slug}`)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
  })

  test('answers 404 for an unknown slug', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await app.request('DELETE', '/api/articles/no-such-article', { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })
})
