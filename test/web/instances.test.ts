import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SESSION_COOKIE } from '../../src/web/session.ts'
import { api, register, type Server, twoInstances, type User, useBinary } from '../e2e/support.ts'
import { onPostgres } from '../support/backend.ts'

/**
 * The web app on two instances of the compiled binary sharing one database
 * (two processes on one SQLite file, or two instances on one PostgreSQL
 * database): a write acknowledged by either, through the API or a page's
 * form, is on the very next page either serves, with both instances' pages
 * kept (warm) before it.
 */
const binary = useBinary()

describe(`the web app on two instances of one ${onPostgres ? 'PostgreSQL' : 'SQLite'} database`, () => {
  let a: Server
  let b: Server
  let author: User
  let reader: User
  beforeAll(async () => {
    ;({ a, b } = await twoInstances(binary()))
    author = await register(a.url)
    reader = await register(b.url)
  }, 60_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
  })

  const page = async (base: string, path: string, session?: string) => {
    const res = await fetch(`${base}${path}`, {
      headers: { accept: 'text/html', ...(session ? { cookie: `${SESSION_COOKIE}=${session}` } : {}) },
      redirect: 'manual',
    })
    return { status: res.status, text: await res.text() }
  }
  /** The same page from both instances, twice each: what each keeps, and serves next. */
  const both = async (path: string, session?: string) => {
    const out: string[] = []
    for (const base of [a.url, b.url, a.url, b.url]) {
      const res = await page(base, path, session)
      expect({ base, path, status: res.status }).toEqual({ base, path, status: 200 })
      out.push(res.text)
    }
    return out
  }
  const form = (base: string, path: string, fields: Record<string, string>, session: string) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        cookie: `${SESSION_COOKIE}=${session}`,
      },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
    })

  test('a write through the API on one instance is on the next page of the other, for every reader', async () => {
    const title = `Spread ${Date.now().toString(36)}`
    for (const s of [undefined, reader.token, author.token]) await both('/', s)
    const created = await api(a.url, 'POST', '/api/articles', {
      token: author.token,
      body: { article: { title, description: 'd', body: 'b', tagList: ['spread'] } },
    })
    expect(created.status).toBe(201)
    for (const s of [undefined, reader.token, author.token]) for (const text of await both('/', s)) expect(text).toContain(title)

    const path = `/article/${created.body.article.slug}`
    for (const s of [undefined, reader.token]) await both(path, s)
    expect((await api(b.url, 'POST', `${path.replace('/article', '/api/articles')}/favorite`, { token: reader.token })).status).toBe(200)
    for (const text of await both(path)) expect(text).toContain('<span class="counter">(1)</span>')
    for (const text of await both(path, reader.token)) expect(text).toContain('Unfavorite Article')
  })

  test('a form posted to one instance is on the next page of the other', async () => {
    const title = `Formed ${Date.now().toString(36)}`
    const created = await api(b.url, 'POST', '/api/articles', {
      token: author.token,
      body: { article: { title, description: 'd', body: 'b' } },
    })
    const path = `/article/${created.body.article.slug}`
    for (const s of [undefined, author.token, reader.token]) await both(path, s)
    const posted = await form(a.url, `${path}/comments`, { body: 'Seen everywhere' }, reader.token)
    expect({ status: posted.status, location: posted.headers.get('location') }).toEqual({ status: 303, location: `${path}#comments` })
    for (const s of [undefined, author.token, reader.token])
      for (const text of await both(path, s)) expect(text).toContain('Seen everywhere')

    // the reader's profile, renamed on one instance: the navbar of the reader's pages on the other
    await both(path, reader.token)
    const renamed = `${reader.username}r`
    const saved = await form(b.url, '/settings', { username: renamed, email: reader.email, bio: 'New bio', image: '' }, reader.token)
    expect(saved.status).toBe(303)
    const session = /conduit_session=([^;]+)/.exec(saved.headers.get('set-cookie') ?? '')![1]!
    for (const text of await both(path, session)) {
      expect(text).toContain(`href="/profile/${renamed}"`)
      expect(text).not.toContain(`href="/profile/${reader.username}"`)
    }
  })
})
