import { describe, expect, test } from 'bun:test'
import { firstFreeSuffix, RESERVED_SLUGS, SLUG_MAX, slugify } from '../../src/articles/slug.ts'
import { testApp } from '../support/app.ts'
import { type QueryDb, testDatabase } from '../support/backend.ts'
import { conduitApp, follow } from '../support/conduit.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'

describe('slugify', () => {
  test('lower-cases the title and joins its words with dashes', () => {
    expect(slugify('How to Train Your Dragon')).toBe('how-to-train-your-dragon')
    expect(slugify('HTTP 2 in 10 minutes')).toBe('http-2-in-10-minutes')
  })

  test('turns every run of other characters into one dash, with none at either end', () => {
    expect(slugify('  --Hello,   World!!--  ')).toBe('hello-world')
    expect(slugify('a_b.c/d\\e+f')).toBe('a-b-c-d-e-f')
    expect(slugify('tabs\tand\nnew lines')).toBe('tabs-and-new-lines')
    expect(slugify('emoji 🐉 inside')).toBe('emoji-inside')
  })

  test('drops combining marks after NFKD normalisation', () => {
    expect(slugify('Crème Brûlée à la carte')).toBe('creme-brulee-a-la-carte')
    expect(slugify('Ångström Ñandú')).toBe('angstrom-nandu')
    // already decomposed input gives the same slug as composed input
    expect(slugify('Cre\u0300me')).toBe('creme')
    expect(slugify('Cre\u0300me')).toBe(slugify('Crème'))
  })

  test('applies compatibility decompositions', () => {
    expect(slugify('ﬁne ﬂow')).toBe('fine-flow')
    expect(slugify('Ｆｕｌｌｗｉｄｔｈ １２３')).toBe('fullwidth-123')
    expect(slugify('① ½')).toBe('1-1-2')
    expect(slugify('Ⅻ')).toBe('xii')
  })

  test('keeps letters and digits of other scripts', () => {
    expect(slugify('日本語のタイトル')).toBe('日本語のタイトル')
    expect(slugify('Привет, Мир!')).toBe('привет-мир')
    expect(slugify('Γειά σου Κόσμε')).toBe('γεια-σου-κοσμε')
    expect(slugify('مرحبا ١٢٣')).toBe('مرحبا-١٢٣')
    expect(slugify('עברית 2024')).toBe('עברית-2024')
  })

  test('lower-cases İ without leaving its dot behind', () => {
    expect(slugify('İstanbul')).toBe('istanbul')
  })

  test('lower-cases capitals that only appear through NFKD', () => {
    // ℌ (black-letter H), ℡ and the mathematical bold letters decompose to ASCII capitals
    expect(slugify('ℌello')).toBe('hello')
    expect(slugify('Call ℡')).toBe('call-tel')
    expect(slugify('𝐀𝐁𝐂')).toBe('abc')
  })

  test('every slug is already lower-case and normalised', () => {
    const slugs = ['ℌello', 'Ⅻ Olympiad', 'ÀÉÎÕÜ', 'Σίσυφος', '㎒ band', '🄰🄱 pair', '한국어', 'ガイド', 'नमस्ते'].map(slugify)
    expect(slugs).toEqual(slugs.map((s) => s.toLowerCase().normalize('NFC')))
  })

  test('other scripts keep their marks, and Hangul its syllables: the slug reads as the title does', () => {
    expect(slugify('한국어 제목')).toBe('한국어-제목')
    expect(slugify('ガイドブック')).toBe('ガイドブック')
    expect(slugify('नमस्ते दुनिया')).toBe('नमस्ते-दुनिया')
    expect(slugify('ภาษาไทย')).toBe('ภาษาไทย')
    // composed or decomposed, the same slug
    expect(slugify('한국어'.normalize('NFD'))).toBe(slugify('한국어'))
    // a mark with no letter before it is not part of a word
    expect(slugify('- \u0301 x')).toBe('x')
  })

  test('letters and marks with no look of their own are dropped: a slug reads as it looks', () => {
    // Hangul fillers count as letters; a variation selector as a mark
    expect(slugify('Hello\u3164World')).toBe('helloworld')
    expect(slugify('a\u115f\u1160b \uffa0c')).toBe('ab-c')
    expect(slugify('葛\u{E0100}城')).toBe('葛城')
    expect(slugify('\u3164')).toBe('article')
  })

  test('keeps at most 100 characters and never ends in a dash', () => {
    expect(SLUG_MAX).toBe(100)
    expect(slugify('a'.repeat(150))).toBe('a'.repeat(100))
    // the 100th character would be the dash before "b"
    expect(slugify(`${'a'.repeat(99)} b`)).toBe('a'.repeat(99))
    const words = slugify('word '.repeat(50))
    expect(words.length).toBeLessThanOrEqual(100)
    expect(words).toMatch(/^word(-word)*$/)
  })

  test('counts the 100 characters in code points and never splits a surrogate pair', () => {
    const slug = slugify('\u{20000}'.repeat(150))
    expect(Array.from(slug)).toHaveLength(100)
    expect(slug).toBe('\u{20000}'.repeat(100))
    expect(slug.isWellFormed()).toBe(true)
  })

  test('falls back to "article" when nothing is left', () => {
    for (const title of ['', '   ', '!!!', '---', '🐉🔥', '\u0301\u0300']) {
      expect(slugify(title)).toBe('article')
    }
  })
})

describe('firstFreeSuffix', () => {
  test('starts at 2', () => {
    expect(firstFreeSuffix('hello', [])).toBe(2)
    expect(firstFreeSuffix('hello', ['hello', 'hello-world'])).toBe(2)
  })

  test('takes the smallest free numbered suffix from 2 up', () => {
    expect(firstFreeSuffix('hello', ['hello', 'hello-2'])).toBe(3)
    expect(firstFreeSuffix('hello', ['hello', 'hello-3'])).toBe(2)
  })

  test('does not count look-alike slugs as taken suffixes', () => {
    expect(firstFreeSuffix('hello', ['hello', 'hello-02', 'hello-2x', 'hello-world', 'hello-0'])).toBe(2)
  })
})

describe('slugs through HTTP', () => {
  test('gives the same title x, x-2 and x-3', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = []
    for (let i = 0; i < 3; i++) slugs.push((await createArticle(app, jake.token, { title: 'Same Title' })).slug)
    expect(slugs).toEqual(['same-title', 'same-title-2', 'same-title-3'])
    for (const slug of slugs) {
      const res = await app.request('GET', `/api/articles/${slug}`)
      expect(res.status).toBe(200)
      expect(res.body.article.slug).toBe(slug)
    }
  })

  test('gives titles with the same slug but different spelling distinct slugs', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const a = await createArticle(app, jake.token, { title: 'Crème brûlée' })
    const b = await createArticle(app, jake.token, { title: 'CREME BRULEE!' })
    expect([a.slug, b.slug]).toEqual(['creme-brulee', 'creme-brulee-2'])
  })

  test('gives ten concurrent creations of one title x and x-2 to x-10', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        app.request('POST', '/api/articles', {
          token: jake.token,
          body: { article: { title: 'Race', description: `attempt ${i}`, body: 'b' } },
        }),
      ),
    )
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201))
    const slugs = responses.map((r) => r.body.article.slug as string)
    expect([...slugs].sort()).toEqual(['race', ...Array.from({ length: 9 }, (_, i) => `race-${i + 2}`)].sort())
    const list = await app.request('GET', '/api/articles?limit=100')
    expect(list.body.articlesCount).toBe(10)
  })

  test('gives concurrent creations whose bases want one slug (x taken wants x-2, as does "x 2") distinct slugs', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const create = (title: string) =>
      app.request('POST', '/api/articles', { token: jake.token, body: { article: { title, description: 'd', body: 'b' } } })
    for (let round = 0; round < 4; round++) {
      const base = `Clash ${round}x`
      expect((await create(base)).status).toBe(201)
      // each pair races for `<base>-2`: the second title's base, and the first's next suffix
      const titles = [base, `${base} 2`, base, `${base} 2`]
      const responses = await Promise.all(titles.map(create))
      expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201])
      const slugs = responses.map((r) => r.body.article.slug as string)
      expect(new Set(slugs).size).toBe(4)
      expect(slugs.every((slug, i) => slug.startsWith(slugify(titles[i]!)))).toBe(true)
    }
    const list = await app.request('GET', '/api/articles?limit=100')
    expect(list.body.articlesCount).toBe(20)
  })

  test('treats a title ending in a number as a base of its own', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = []
    for (const title of ['Top 10', 'Top', 'Top', 'Top 2']) slugs.push((await createArticle(app, jake.token, { title })).slug)
    // "top-10" is another title's base, not a suffix of "top"; "Top 2" finds its base "top-2" taken
    expect(slugs).toEqual(['top-10', 'top', 'top-2', 'top-2-2'])
  })

  test('derives the slug of a title in another script and serves it percent-encoded', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { title: 'Ünïcödé – 日本語!' })
    expect(slug).toBe('unicode-日本語')
    const res = await app.request('GET', `/api/articles/${encodeURIComponent(slug)}`)
    expect(res.status).toBe(200)
    expect(res.body.article.title).toBe('Ünïcödé – 日本語!')
  })

  test('caps the slug of a 200-character title at 100 characters', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { title: 'word '.repeat(40).trim() })
    expect(slug.length).toBeLessThanOrEqual(100)
    expect(slug).toMatch(/^word(-word)*$/)
    expect((await app.request('GET', `/api/articles/${slug}`)).status).toBe(200)
  })

  test('never hands out a suffix twice: after x-2 is deleted the next is x-4, and a free base is used again', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const slugs = []
    for (let i = 0; i < 3; i++) slugs.push((await createArticle(app, jake.token, { title: 'Again' })).slug)
    expect(slugs).toEqual(['again', 'again-2', 'again-3'])
    for (const slug of ['again-2', 'again']) {
      expect((await app.request('DELETE', `/api/articles/${slug}`, { token: jake.token })).status).toBe(204)
    }
    // the base is the contract's first choice whenever it is free; numbers never come back
    expect((await createArticle(app, jake.token, { title: 'Again' })).slug).toBe('again')
    expect((await createArticle(app, jake.token, { title: 'Again' })).slug).toBe('again-4')
  })

  test('allocating a suffix costs the same however many articles share the base', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    for (let i = 0; i < 30; i++) await createArticle(app, jake.token, { title: 'Popular' })
    // one counter row per base: the database holds the next number, not a scan of the taken ones
    expect(await app.db.count("SELECT next FROM slug_counters WHERE base = 'popular'")).toBe(31)
    expect((await createArticle(app, jake.token, { title: 'Popular' })).slug).toBe('popular-31')
  })

  test('names titles without letters or digits "article", then "article-2"', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const first = await createArticle(app, jake.token, { title: '!!!' })
    const second = await createArticle(app, jake.token, { title: '🐉 🔥' })
    expect([first.slug, second.slug]).toEqual(['article', 'article-2'])
  })

  test('lower-cases the slug of a title written with compatibility capitals', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token, { title: 'ℌello 𝐖orld' })
    expect(slug).toBe('hello-world')
  })
})

describe('reserved slugs', () => {
  test('are the static segments the declared routes put where a slug goes under /api/articles/', async () => {
    const app = await conduitApp()
    const statics = new Set<string>()
    for (const { path } of app.app.declared.map((r) => ({ path: `/api${r.path}` }))) {
      const [empty, api, articles, segment] = path.split('/')
      if (empty === '' && api === 'api' && articles === 'articles' && segment && !segment.startsWith(':')) statics.add(segment)
    }
    expect(statics).toEqual(new Set(['feed']))
    expect(new Set(RESERVED_SLUGS)).toEqual(statics)
  })

  test('"Feed" gets feed-2, readable at /api/articles/feed-2, while /api/articles/feed stays the feed', async () => {
    const app = await conduitApp()
    const [jake, ann] = [await registerUser(app), await registerUser(app)]
    await follow(app, ann.token, jake.username)
    const slugs = []
    for (const title of ['Feed', 'FEED!', 'Feed']) slugs.push((await createArticle(app, jake.token, { title })).slug)
    expect(slugs).toEqual(['feed-2', 'feed-3', 'feed-4'])
    const res = await app.request('GET', '/api/articles/feed-2')
    expect(res.status).toBe(200)
    expect(res.body.article).toMatchObject({ slug: 'feed-2', title: 'Feed' })
    const feed = await app.request('GET', '/api/articles/feed', { token: ann.token })
    expect(feed.status).toBe(200)
    expect(feed.body.articlesCount).toBe(3)
    expect((await app.request('GET', '/api/articles/feed')).status).toBe(401)
  })

  test('a retitle to "Feed" gets the next free feed-N; fixing its case keeps it', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    await createArticle(app, jake.token, { title: 'Feed' })
    const { slug } = await createArticle(app, jake.token, { title: 'Something else' })
    const put = (from: string, title: string) =>
      app.request('PUT', `/api/articles/${from}`, { token: jake.token, body: { article: { title } } })
    const retitled = await put(slug, 'Feed')
    expect(retitled.status).toBe(200)
    expect(retitled.body.article.slug).toBe('feed-3')
    expect((await put('feed-3', 'feed')).body.article.slug).toBe('feed-3')
    expect((await app.request('GET', '/api/articles/feed-3')).body.article.title).toBe('feed')
  })
})

describe('migration 003: an article at a reserved slug', () => {
  /** Rows a database at version 2 allowed: an article at `feed` and one at `feed-2`, with their author. */
  const feedArticles = (counter: number | null) => async (q: QueryDb) => {
    await q.run(
      "INSERT INTO users (username, username_key, email, password_hash, created_at) VALUES ('old', 'old', 'old@example.com', 'x', 1)",
    )
    for (const [slug, at] of [
      ['feed', 1],
      ['feed-2', 2],
      ['feedback', 3],
    ] as const) {
      await q.run(
        'INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)',
        slug,
        `Title of ${slug}`,
        'd',
        'b',
        at,
        at,
      )
    }
    if (counter !== null) await q.run("INSERT INTO slug_counters (base, next) VALUES ('feed', ?)", counter)
  }
  const slugs = async (q: QueryDb) => (await q.all<{ slug: string }>('SELECT slug FROM articles ORDER BY id')).map((r) => r.slug)

  test('moves it to the first free feed-N and sets the counter past N', async () => {
    const db = await testDatabase({ version: 2, before: feedArticles(null) })
    expect(await slugs(db)).toEqual(['feed-3', 'feed-2', 'feedback'])
    expect(await db.count("SELECT next FROM slug_counters WHERE base = 'feed'")).toBe(4)
    const app = await testApp({}, db)
    const res = await app.request('GET', '/api/articles/feed-3')
    expect(res.status).toBe(200)
    expect(res.body.article.title).toBe('Title of feed')
    // the next "Feed" goes on from the counter
    const jake = await registerUser(app)
    expect((await createArticle(app, jake.token, { title: 'Feed' })).slug).toBe('feed-4')
  })

  test('goes on from an existing counter, past numbers in use', async () => {
    const db = await testDatabase({
      version: 2,
      before: async (q) => {
        await feedArticles(2)(q)
        await q.run(
          "INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES ('feed-3', 't', 'd', 'b', 1, 4, 4)",
        )
      },
    })
    expect(await slugs(db)).toEqual(['feed-4', 'feed-2', 'feedback', 'feed-3'])
    expect(await db.count("SELECT next FROM slug_counters WHERE base = 'feed'")).toBe(5)
  })

  test('leaves a database without one as it was', async () => {
    const db = await testDatabase({
      version: 2,
      before: async (q) => {
        await feedArticles(null)(q)
        await q.run("UPDATE articles SET slug = 'not-feed' WHERE slug = 'feed'")
      },
    })
    expect(await slugs(db)).toEqual(['not-feed', 'feed-2', 'feedback'])
    expect(await db.count('SELECT count(*) FROM slug_counters')).toBe(0)
  })
})
