import { describe, expect, test } from 'bun:test'
import { type TestApp, testApp } from '../support/app.ts'
import { registerUser } from '../support/fixtures.ts'

const profile = (app: TestApp, username: string, token?: string) =>
  app.request('GET', `/api/profiles/${encodeURIComponent(username)}`, token ? { token } : {})
const follow = (app: TestApp, username: string, token: string) =>
  app.request('POST', `/api/profiles/${encodeURIComponent(username)}/follow`, { token })
const unfollow = (app: TestApp, username: string, token: string) =>
  app.request('DELETE', `/api/profiles/${encodeURIComponent(username)}/follow`, { token })

const notFound = { errors: { profile: ['not found'] } }

describe('GET /api/profiles/:username', () => {
  test('answers an anonymous caller with the profile and following false', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await profile(app, jake.username)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: false } })
  })

  test('shows the bio and image the user set', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    await app.request('PUT', '/api/user', {
      token: jake.token,
      body: { user: { bio: 'I work at statefarm', image: 'https://example.com/jake.jpg' } },
    })
    const res = await profile(app, jake.username)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      profile: { username: jake.username, bio: 'I work at statefarm', image: 'https://example.com/jake.jpg', following: false },
    })
  })

  test('never exposes the email, password or token', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await profile(app, jake.username)
    expect(Object.keys(res.body.profile).sort()).toEqual(['bio', 'following', 'image', 'username'])
    expect(res.text).not.toContain(jake.email)
    expect(res.text).not.toContain(jake.password)
  })

  test('answers an authenticated caller who does not follow with following false', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const res = await profile(app, jake.username, jane.token)
    expect(res.status).toBe(200)
    expect(res.body.profile).toEqual({ username: jake.username, bio: null, image: null, following: false })
  })

  test('answers following true to a caller who follows the user', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    expect((await follow(app, jake.username, jane.token)).status).toBe(200)
    const res = await profile(app, jake.username, jane.token)
    expect(res.status).toBe(200)
    expect(res.body.profile).toEqual({ username: jake.username, bio: null, image: null, following: true })
  })

  test('reports following for the caller only, not for anonymous or other callers', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const bob = await registerUser(app)
    await follow(app, jake.username, jane.token)
    expect((await profile(app, jake.username)).body.profile.following).toBe(false)
    expect((await profile(app, jake.username, bob.token)).body.profile.following).toBe(false)
    expect((await profile(app, jake.username, jane.token)).body.profile.following).toBe(true)
  })

  test('following is one-way: the followed user does not follow back', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await follow(app, jake.username, jane.token)
    expect((await profile(app, jane.username, jake.token)).body.profile.following).toBe(false)
  })

  test('answers a caller looking at their own profile with following false', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await profile(app, jake.username, jake.token)
    expect(res.status).toBe(200)
    expect(res.body.profile).toEqual({ username: jake.username, bio: null, image: null, following: false })
  })

  test('finds usernames with dots, hyphens and underscores', async () => {
    const app = await testApp()
    const user = await registerUser(app, { username: 'jake.the-dog_1' })
    const res = await app.request('GET', '/api/profiles/jake.the-dog_1')
    expect(res.status).toBe(200)
    expect(res.body.profile.username).toBe(user.username)
  })

  test('returns 404 for an unknown username', async () => {
    const app = await testApp()
    await registerUser(app)
    const res = await profile(app, 'nobody')
    expect(res.status).toBe(404)
    expect(res.body).toEqual(notFound)
  })

  test('returns 404 for an unknown username to an authenticated caller', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await profile(app, 'nobody', jake.token)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(notFound)
  })
})

describe('POST /api/profiles/:username/follow', () => {
  test('follows the user and answers the profile with following true', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const res = await follow(app, jake.username, jane.token)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: true } })
  })

  test("answers the followed user's bio and image", async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await app.request('PUT', '/api/user', { token: jake.token, body: { user: { bio: 'hi', image: 'http://example.com/j.png' } } })
    const res = await follow(app, jake.username, jane.token)
    expect(res.body).toEqual({ profile: { username: jake.username, bio: 'hi', image: 'http://example.com/j.png', following: true } })
  })

  test('is idempotent: following twice answers 200 and keeps one follow', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    expect((await follow(app, jake.username, jane.token)).status).toBe(200)
    const again = await follow(app, jake.username, jane.token)
    expect(again.status).toBe(200)
    expect(again.body.profile.following).toBe(true)
    expect(await app.db.count('SELECT count(*) FROM follows')).toBe(1)
    // one unfollow undoes it: there was only one follow
    await unfollow(app, jake.username, jane.token)
    expect((await profile(app, jake.username, jane.token)).body.profile.following).toBe(false)
  })

  test('answers 401 "is missing" without a token and follows nobody', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await app.request('POST', `/api/profiles/${jake.username}/follow`)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect(await app.db.count('SELECT count(*) FROM follows')).toBe(0)
  })

  test('answers 401 "is invalid" with a bad token', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await follow(app, jake.username, 'garbage')
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is invalid'] } })
  })

  test('returns 404 for an unknown user', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await follow(app, 'nobody', jake.token)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(notFound)
  })

  test('answers 422 to a user following themselves', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await follow(app, jake.username, jake.token)
    expect(res.status).toBe(422)
    expect(res.body).toEqual({ errors: { profile: ['cannot follow yourself'] } })
    expect((await profile(app, jake.username, jake.token)).body.profile.following).toBe(false)
  })

  test('answers 422 to a user following themselves under another letter case of their name', async () => {
    const app = await testApp()
    const jake = await registerUser(app, { username: 'SelfFollower' })
    const res = await follow(app, 'selffollower', jake.token)
    expect([404, 422]).toContain(res.status)
    expect(await app.db.count('SELECT count(*) FROM follows')).toBe(0)
  })

  test('works with Content-Type: application/json and an empty body', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const res = await app.request('POST', `/api/profiles/${jake.username}/follow`, {
      token: jane.token,
      body: '',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: true } })
  })

  test('ignores a JSON body it does not need', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const res = await app.request('POST', `/api/profiles/${jake.username}/follow`, { token: jane.token, body: {} })
    expect(res.status).toBe(200)
    expect(res.body.profile.following).toBe(true)
  })

  test("lists the followed user's articles in the follower's feed", async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await app.request('POST', '/api/articles', {
      token: jake.token,
      body: { article: { title: 'Followed', description: 'd', body: 'b' } },
    })
    const before = await app.request('GET', '/api/articles/feed', { token: jane.token })
    expect(before.body.articlesCount).toBe(0)
    await follow(app, jake.username, jane.token)
    const after = await app.request('GET', '/api/articles/feed', { token: jane.token })
    expect(after.status).toBe(200)
    expect(after.body.articlesCount).toBe(1)
    expect(after.body.articles[0].author).toEqual({ username: jake.username, bio: null, image: null, following: true })
  })
})

describe('DELETE /api/profiles/:username/follow', () => {
  test('unfollows the user and answers the profile with following false', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await follow(app, jake.username, jane.token)
    const res = await unfollow(app, jake.username, jane.token)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: false } })
    expect((await profile(app, jake.username, jane.token)).body.profile.following).toBe(false)
  })

  test('is idempotent: unfollowing twice answers 200 both times', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await follow(app, jake.username, jane.token)
    expect((await unfollow(app, jake.username, jane.token)).status).toBe(200)
    const again = await unfollow(app, jake.username, jane.token)
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: false } })
  })

  test('answers 200 for a user the caller never followed', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const res = await unfollow(app, jake.username, jane.token)
    expect(res.status).toBe(200)
    expect(res.body.profile.following).toBe(false)
  })

  test("removes only the caller's follow", async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    const bob = await registerUser(app)
    await follow(app, jake.username, jane.token)
    await follow(app, jake.username, bob.token)
    await unfollow(app, jake.username, jane.token)
    expect((await profile(app, jake.username, jane.token)).body.profile.following).toBe(false)
    expect((await profile(app, jake.username, bob.token)).body.profile.following).toBe(true)
  })

  test('answers 401 "is missing" without a token and keeps the follow', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await follow(app, jake.username, jane.token)
    const res = await app.request('DELETE', `/api/profiles/${jake.username}/follow`)
    expect(res.status).toBe(401)
    expect(res.body).toEqual({ errors: { token: ['is missing'] } })
    expect((await profile(app, jake.username, jane.token)).body.profile.following).toBe(true)
  })

  test('returns 404 for an unknown user', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const res = await unfollow(app, 'nobody', jake.token)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(notFound)
  })

  test('works with Content-Type: application/json and an empty body', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const jane = await registerUser(app)
    await follow(app, jake.username, jane.token)
    const res = await app.request('DELETE', `/api/profiles/${jake.username}/follow`, {
      token: jane.token,
      body: '',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ profile: { username: jake.username, bio: null, image: null, following: false } })
  })
})
