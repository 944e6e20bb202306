import { describe, expect, test } from 'bun:test'
import type { TestApp } from '../support/app.ts'
import { addComment, type Comment, conduitApp, follow, ISO_MS, JSON_TYPE, registerUsers } from '../support/conduit.ts'
import { createArticle, expectTokenRefused, registerUser } from '../support/fixtures.ts'

const commentsPath = (slug: string) => `/api/articles/${slug}/comments`
const post = (app: TestApp, token: string, slug: string, comment: unknown) =>
  app.request('POST', commentsPath(slug), { token, body: { comment } })
const list = async (app: TestApp, slug: string, token?: string) => {
  const res = await app.request('GET', commentsPath(slug), token ? { token } : {})
  expect(res.status).toBe(200)
  return res.body.comments as Comment[]
}

describe('POST /api/articles/:slug/comments', () => {
  test('adds a comment and answers 201 with it', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    const before = Date.now()
    const res = await post(app, jane!.token, slug, { body: 'Thank you so much!' })
    expect(res.status).toBe(201)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(res.body).toEqual({
      comment: {
        id: expect.any(Number),
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: expect.stringMatching(ISO_MS),
        body: 'Thank you so much!',
        author: { username: jane!.username, bio: null, image: null, following: false },
      },
    })
    const { id, createdAt, updatedAt } = res.body.comment
    expect(Number.isInteger(id)).toBe(true)
    expect(updatedAt).toBe(createdAt)
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(Date.now())
    expect(await list(app, slug)).toEqual([res.body.comment])
  })

  test('stores the body exactly as sent (Markdown spaces included) and accepts 20,000 characters', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const markdown = '    code block\nline break  \n'
    const exact = await post(app, jake.token, slug, { body: markdown })
    expect(exact.status).toBe(201)
    expect(exact.body.comment.body).toBe(markdown)
    expect((await list(app, slug)).map((c) => c.body)).toEqual([markdown])
    const longest = await post(app, jake.token, slug, { body: 'c'.repeat(20_000) })
    expect(longest.status).toBe(201)
    expect(longest.body.comment.body).toBe('c'.repeat(20_000))
    const tooLong = await post(app, jake.token, slug, { body: ` ${'c'.repeat(20_000)}` })
    expect(tooLong.status).toBe(422)
    expect(tooLong.body).toEqual({ errors: { body: ['is too long (maximum is 20000 characters)'] } })
  })

  test('ignores unknown fields', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('POST', commentsPath(slug), {
      token: jake.token,
      body: { comment: { body: 'Hi', id: 999, author: 'someone' }, extra: true },
    })
    expect(res.status).toBe(201)
    expect(res.body.comment.body).toBe('Hi')
    expect(res.body.comment.id).not.toBe(999)
    expect(res.body.comment.author.username).toBe(jake.username)
  })

  test.each([
    ['empty', ''],
    ['only whitespace', ' \n\t '],
    ['only characters that show nothing', '\u200b\u2060 \u3164'],
  ])('answers 422 for an %s body', async (_, body) => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await post(app, jake.token, slug, { body })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { body: ["can't be blank"] } })
    expect(await list(app, slug)).toEqual([])
  })

  test('answers 422 for a body over 20,000 characters', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await post(app, jake.token, slug, { body: 'c'.repeat(20_001) })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { body: [expect.stringMatching(/too long/)] } })
    expect(await list(app, slug)).toEqual([])
  })

  test('answers 422 for a missing body or one of the wrong type', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const missing = await post(app, jake.token, slug, {})
    expect(missing.status).toBe(422)
    expect(missing.body).toEqual({ errors: { body: ["can't be blank"] } })
    for (const body of [42, null, ['text'], { text: 'x' }]) {
      const res = await post(app, jake.token, slug, { body })
      expect(res.status).toBe(422)
      expect(res.body).toEqual({ errors: { body: [expect.any(String)] } })
    }
    expect(await list(app, slug)).toEqual([])
  })

  test('answers 422 without the comment wrapper', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('POST', commentsPath(slug), { token: jake.token, body: {} })
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { comment: ["can't be blank"] } })
  })

  test('answers 400 for malformed JSON', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('POST', commentsPath(slug), { token: jake.token, body: '{"comment": {"body": "x"}' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ errors: { body: ['is not valid JSON'] } })
  })

  test('answers 404 for an unknown article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const res = await post(app, jake.token, 'no-such-article', { body: 'Hello?' })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('POST', commentsPath(slug), { body: { comment: { body: 'Anonymous' } } })
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect(await list(app, slug)).toEqual([])
  })
})

describe('GET /api/articles/:slug/comments', () => {
  test('lists the comments oldest first', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    const other = await createArticle(app, jake!.token)
    const first = await addComment(app, jane!.token, slug, 'first')
    await addComment(app, jane!.token, other.slug, 'elsewhere')
    const second = await addComment(app, jake!.token, slug, 'second')
    const third = await addComment(app, jane!.token, slug, 'third')

    const comments = await list(app, slug)
    expect(comments).toEqual([first, second, third])
    expect(first.id).toBeLessThan(second.id)
    expect(second.id).toBeLessThan(third.id)
  })

  test('shows a new or deleted comment to a reader who listed them before', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    expect(await list(app, slug)).toEqual([])
    const added = await addComment(app, jake.token, slug, 'New')
    expect((await list(app, slug)).map((c) => c.id)).toEqual([added.id])
    expect((await app.request('DELETE', `${commentsPath(slug)}/${added.id}`, { token: jake.token })).status).toBe(204)
    expect(await list(app, slug)).toEqual([])
  })

  test('answers an article without comments with an empty list', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const res = await app.request('GET', commentsPath(slug))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ comments: [] })
  })

  test('shows author.following from the caller’s view', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    await addComment(app, jake!.token, slug)
    await follow(app, jane!.token, jake!.username)
    expect((await list(app, slug, jane!.token))[0]!.author.following).toBe(true)
    expect((await list(app, slug))[0]!.author.following).toBe(false)
    expect((await list(app, slug, jake!.token))[0]!.author.following).toBe(false)
  })

  test('answers 404 for an unknown article', async () => {
    const app = await conduitApp()
    const res = await app.request('GET', commentsPath('no-such-article'))
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
  })

  test('reads an invalid token as no token, and says so', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const ann = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    await app.request('POST', `/api/profiles/${ann.username}/follow`, { token: jake.token })
    await app.request('POST', commentsPath(slug), { token: ann.token, body: { comment: { body: 'hi' } } })
    await expectTokenRefused(app, 'Token not-a-token', [commentsPath(slug)])
    await expectTokenRefused(app, `Token ${jake.token}x`, [commentsPath(slug)])
  })
})

describe('DELETE /api/articles/:slug/comments/:id', () => {
  test('lets the comment’s author delete it: 204 with an empty body', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    const doomed = await addComment(app, jane!.token, slug, 'doomed')
    const kept = await addComment(app, jane!.token, slug, 'kept')
    const res = await app.request('DELETE', `${commentsPath(slug)}/${doomed.id}`, { token: jane!.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect((await list(app, slug)).map((c) => c.id)).toEqual([kept.id])
    const again = await app.request('DELETE', `${commentsPath(slug)}/${doomed.id}`, { token: jane!.token })
    expect(again.status).toBe(404)
    expect(again.body).toEqual({ errors: { comment: ['not found'] } })
  })

  test('lets the article’s author delete someone else’s comment', async () => {
    const app = await conduitApp()
    const [jake, jane] = await registerUsers(app, 2)
    const { slug } = await createArticle(app, jake!.token)
    const { id } = await addComment(app, jane!.token, slug)
    const res = await app.request('DELETE', `${commentsPath(slug)}/${id}`, { token: jake!.token })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect(await list(app, slug)).toEqual([])
  })

  test('answers 403 to a user who wrote neither the comment nor the article', async () => {
    const app = await conduitApp()
    const [jake, jane, john] = await registerUsers(app, 3)
    const { slug } = await createArticle(app, jake!.token)
    const comment = await addComment(app, jane!.token, slug)
    const res = await app.request('DELETE', `${commentsPath(slug)}/${comment.id}`, { token: john!.token })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ errors: { comment: ['forbidden'] } })
    expect((await list(app, slug)).map((c) => c.id)).toEqual([comment.id])
  })

  test('answers 401 without a token', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const { id } = await addComment(app, jake.token, slug)
    const res = await app.request('DELETE', `${commentsPath(slug)}/${id}`)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect(await list(app, slug)).toHaveLength(1)
  })

  test('answers 404 for an unknown article', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    const { id } = await addComment(app, jake.token, slug)
    const res = await app.request('DELETE', `${commentsPath('no-such-article')}/${id}`, { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { article: ['not found'] } })
    expect(await list(app, slug)).toHaveLength(1)
  })

  test.each(['999999', 'abc', '1.5', '-1', '0', '99999999999999999999999'])('answers 404 for the comment id %p', async (id) => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const { slug } = await createArticle(app, jake.token)
    await addComment(app, jake.token, slug)
    const res = await app.request('DELETE', `${commentsPath(slug)}/${id}`, { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { comment: ['not found'] } })
    expect(await list(app, slug)).toHaveLength(1)
  })

  test('answers 404 for the id of a comment on another article, and keeps that comment', async () => {
    const app = await conduitApp()
    const jake = await registerUser(app)
    const mine = await createArticle(app, jake.token)
    const other = await createArticle(app, jake.token)
    const elsewhere = await addComment(app, jake.token, other.slug)
    const res = await app.request('DELETE', `${commentsPath(mine.slug)}/${elsewhere.id}`, { token: jake.token })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ errors: { comment: ['not found'] } })
    expect((await list(app, other.slug)).map((c) => c.id)).toEqual([elsewhere.id])
  })
})
