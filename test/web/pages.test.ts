import { describe, expect, test } from 'bun:test'
import type { Config } from '../../src/config.ts'
import { INLINE_CHARS, renderMarkdown, TABLE_CELLS } from '../../src/web/markdown.ts'
import { COMMENTS_PER_PAGE } from '../../src/web/pages/article.ts'
import { SESSION_COOKIE, sessionCookie } from '../../src/web/session.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { addComment, favorite, follow } from '../support/conduit.ts'
import { createArticle, registerUser, unique } from '../support/fixtures.ts'

/**
 * The web app over HTTP, on the backend under test: every page and its
 * headers, the session cookie, the forms refused from other sites (and
 * changing nothing), the forms' errors, and the page cache's exactness.
 * What only a browser can tell (scripts run or not, axe, the keyboard) is
 * in browser.test.ts.
 */

interface PageAnswer {
  status: number
  headers: Headers
  text: string
  /** where a 303 sends the browser */
  location: string | null
  /** the Set-Cookie header, if any */
  cookie: string | null
}

interface Options {
  /** the API token the session cookie holds */
  session?: string
  headers?: Record<string, string>
  /** the request's URL's origin (https:// for a site behind TLS) */
  origin?: string
  /** the site takes the request as over TLS (so the session cookie has its TLS name); by default, when origin is https */
  tls?: boolean
}

/** As a browser sends it: a page of this site asks (Sec-Fetch-Site), the session in its cookie. */
async function request(app: TestApp, method: string, path: string, body: string | undefined, o: Options = {}): Promise<PageAnswer> {
  const headers: Record<string, string> = { accept: 'text/html', ...o.headers }
  if (o.session) headers.cookie = `theme=dark; ${sessionCookie(o.tls ?? o.origin?.startsWith('https:') ?? false)}=${o.session}`
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
  const res = await app.app.respond(new Request(`${o.origin ?? 'http://localhost'}${path}`, { method, headers, body }))
  return {
    status: res.status,
    headers: res.headers,
    text: await res.text(),
    location: res.headers.get('location'),
    cookie: res.headers.get('set-cookie'),
  }
}
const get = (app: TestApp, path: string, o: Options = {}) => request(app, 'GET', path, undefined, o)
const post = (app: TestApp, path: string, fields: Record<string, string | string[]>, o: Options = {}) => {
  const form = new URLSearchParams()
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) form.append(k, one)
  return request(app, 'POST', path, form.toString(), { ...o, headers: { 'sec-fetch-site': 'same-origin', ...o.headers } })
}
/** The token a Set-Cookie starts a session with. */
const tokenOf = (cookie: string | null) => new RegExp(`^${SESSION_COOKIE}=([^;]+);`).exec(cookie ?? '')?.[1]
/** The text a page shows, its markup removed (for "shows X" checks that do not depend on the markup). */
const shown = (html: string) =>
  html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')

/**
 * What a browser holds in a page's field `name` (the HTML standard's rules, for the markup these
 * pages make): the parser reads a CR of the page as LF and drops one newline right after
 * `<textarea>`; a text input drops line breaks.
 */
function fieldValue(page: string, name: string): string {
  const textOf = (raw: string) =>
    raw
      .replace(/\r\n?/g, '\n')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  const area = new RegExp(`<textarea [^>]*name="${name}"[^>]*>([^<]*)</textarea>`).exec(page)
  if (area) return textOf(area[1]!).replace(/^\n/, '')
  const input = new RegExp(`<input [^>]*name="${name}"[^>]* value="([^"]*)"`).exec(page)
  if (!input) throw new Error(`no field ${name} on the page`)
  return textOf(input[1]!).replace(/\n/g, '')
}
/** What a browser sends of a field holding `value`: every line break as CRLF (a text input has none). */
const sent = (value: string) => value.replace(/\n/g, '\r\n')

async function site(config: Partial<Config> = {}) {
  const app = await testApp(config)
  const ada = await registerUser(app, { username: unique('ada') })
  const bob = await registerUser(app, { username: unique('bob') })
  const article = await createArticle(app, ada.token, { title: 'Hello there', body: 'Some *text*.', tagList: ['intro'] })
  return { app, ada, bob, slug: article.slug as string }
}

describe('the web app over HTTP', () => {
  test('every page answers HTML with the page headers; a signed-out reader is sent to sign in for the editor and settings', async () => {
    const { app, ada, slug } = await site()
    const pages: [string, string | undefined, number][] = [
      ['/', undefined, 200],
      ['/?page=2', undefined, 200],
      ['/tag/intro', undefined, 200],
      [`/article/${slug}`, undefined, 200],
      [`/profile/${ada.username}`, undefined, 200],
      [`/profile/${ada.username}/favorites`, undefined, 200],
      ['/login', undefined, 200],
      ['/register', undefined, 200],
      ['/no-such-page', undefined, 404],
      ['/article/no-such-article', undefined, 404],
      ['/profile/nobody-here', undefined, 404],
      ['/', ada.token, 200],
      ['/?feed=following', ada.token, 200],
      ['/editor', ada.token, 200],
      [`/editor/${slug}`, ada.token, 200],
      ['/settings', ada.token, 200],
    ]
    for (const [path, session, status] of pages) {
      const res = await get(app, path, { session })
      const csp = res.headers.get('content-security-policy') ?? ''
      expect({ path, status: res.status, type: res.headers.get('content-type'), doctype: res.text.startsWith('<!doctype html>') }).toEqual({
        path,
        status,
        type: 'text/html; charset=utf-8',
        doctype: true,
      })
      expect({ path, script: csp.includes("script-src 'self'"), frames: csp.includes("frame-ancestors 'none'") }).toEqual({
        path,
        script: true,
        frames: true,
      })
      expect(csp).not.toContain('unsafe-inline')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      // a page that shows a user's data is kept by no cache, the browser's history included
      expect(res.headers.get('cache-control')).toBe('no-store')
      // `/` is JSON for a program that asks for it
      expect({ path, vary: res.headers.get('vary') }).toEqual({ path, vary: path.split('?')[0] === '/' ? 'Accept' : null })
      expect({ path, inline: /<script(?![^>]*\bsrc=)[^>]*>/.test(res.text) }).toEqual({ path, inline: false })
    }
    for (const path of ['/editor', `/editor/${slug}`, '/settings']) {
      const res = await get(app, path)
      expect({ path, status: res.status, location: res.location }).toEqual({ path, status: 303, location: '/login' })
    }
    // what is not here says which kind of thing is missing
    const missing: [string, string | undefined, string][] = [
      ['/no-such-page', undefined, 'There is no page at this address.'],
      ['/article/no-such-article', undefined, 'This article does not exist, or was deleted.'],
      ['/editor/no-such-article', ada.token, 'This article does not exist, or was deleted.'],
      ['/profile/nobody-here', undefined, 'There is no user by this name.'],
    ]
    for (const [path, session, words] of missing) {
      const res = await get(app, path, { session })
      expect({ path, status: res.status, says: shown(res.text).includes(words) }).toEqual({ path, status: 404, says: true })
    }
    // HEAD: no body, the GET's length (built, then kept)
    for (const path of ['/login', '/login', '/']) {
      const head = await request(app, 'HEAD', path, undefined)
      const length = Buffer.byteLength((await get(app, path)).text)
      expect({ path, status: head.status, text: head.text, length: head.headers.get('content-length') }).toEqual({
        path,
        status: 200,
        text: '',
        length: String(length),
      })
    }
    const other = await request(app, 'PUT', '/login', 'x=1', { headers: { 'sec-fetch-site': 'same-origin' } })
    expect(other.status).toBe(405)
    // the site's files: kept a year, never sniffed; an SVG opened by itself runs nothing
    for (const path of ['/assets/app.js', '/assets/style.css', '/assets/favicon.svg', '/assets/default-avatar.svg']) {
      const file = await get(app, path)
      expect({
        path,
        status: file.status,
        nosniff: file.headers.get('x-content-type-options'),
        csp: file.headers.get('content-security-policy')?.split('; ')[0],
      }).toEqual({ path, status: 200, nosniff: 'nosniff', csp: "default-src 'none'" })
    }
    // the names of an object's built-in properties are no files
    for (const path of [
      '/assets/constructor',
      '/assets/__proto__',
      '/assets/toString',
      '/swagger/assets/constructor',
      '/swagger/assets/valueOf',
    ]) {
      expect({ path, status: (await get(app, path)).status }).toEqual({ path, status: 404 })
    }
  })

  test('signing up starts a session: the API token in an HttpOnly, SameSite=Lax cookie as long as the token lasts, Secure over TLS', async () => {
    const app = await testApp()
    const username = unique('carol')
    const res = await post(app, '/register', { username, email: `${username}@example.com`, password: 'password123' })
    expect({ status: res.status, location: res.location }).toEqual({ status: 303, location: '/' })
    expect(res.cookie).toMatch(
      new RegExp(`^${SESSION_COOKIE}=[^;]+; Path=/; HttpOnly; SameSite=Lax; Max-Age=${app.config.tokenTtlSeconds}$`),
    )
    // the cookie holds the API's own token: the same user, the same rules
    const token = tokenOf(res.cookie)!
    expect((await app.request('GET', '/api/user', { token })).body.user.username).toBe(username)
    const home = await get(app, '/', { session: token })
    expect(shown(home.text)).toContain(`${username}`)
    expect(home.text).toContain('href="/editor"')

    // behind TLS: the request's own scheme, or a trusted proxy's word for it
    const tls = await post(app, '/login', { email: `${username}@example.com`, password: 'password123' }, { origin: 'https://localhost' })
    expect(tls.cookie).toStartWith(`__Host-${SESSION_COOKIE}=`)
    expect(tls.cookie).toEndWith(`; Path=/; HttpOnly; SameSite=Lax; Max-Age=${app.config.tokenTtlSeconds}; Secure`)
    const tlsToken = /^__Host-conduit_session=([^;]+);/.exec(tls.cookie ?? '')![1]!
    const overTls = (cookie: string) => get(app, '/settings', { origin: 'https://localhost', headers: { cookie } })
    expect((await overTls(`__Host-${SESSION_COOKIE}=${tlsToken}`)).status).toBe(200)
    // over TLS the plain name is not read: a sibling subdomain could have planted it
    const planted = await overTls(`${SESSION_COOKIE}=${tlsToken}`)
    expect({ status: planted.status, location: planted.location }).toEqual({ status: 303, location: '/login' })
    const tlsOut = await post(
      app,
      '/logout',
      {},
      { origin: 'https://localhost', headers: { cookie: `__Host-${SESSION_COOKIE}=${tlsToken}` } },
    )
    expect(tlsOut.cookie).toBe(`__Host-${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure`)
    const forwarded = { 'x-forwarded-proto': 'https' }
    const untrusted = await post(app, '/login', { email: `${username}@example.com`, password: 'password123' }, { headers: forwarded })
    expect(untrusted.status).toBe(303)
    expect(untrusted.cookie).not.toContain('Secure')
    const proxied = await testApp({ trustProxy: true })
    const name2 = unique('dave')
    const behind = await post(
      proxied,
      '/register',
      { username: name2, email: `${name2}@example.com`, password: 'password123' },
      { headers: forwarded },
    )
    expect(behind.status).toBe(303)
    expect(behind.cookie).toStartWith(`__Host-${SESSION_COOKIE}=`)
    expect(behind.cookie).toEndWith('; Secure')

    // signing out ends it
    const out = await post(app, '/logout', {}, { session: token })
    expect({ status: out.status, location: out.location }).toEqual({ status: 303, location: '/' })
    expect(out.cookie).toBe(`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`)
  })

  test('a refused sign-in or sign-up shows the API’s errors, keeps what was typed (but the password) and starts no session', async () => {
    const { app, ada } = await site()
    const wrong = await post(app, '/login', { email: ada.email, password: 'not-the-password' })
    expect(wrong.status).toBe(401)
    expect(wrong.cookie).toBeNull()
    expect(shown(wrong.text)).toContain('email or password is invalid')
    expect(wrong.text).toContain(`value="${ada.email}"`)
    expect(wrong.text).not.toContain('not-the-password')

    const taken = await post(app, '/register', { username: unique('eve'), email: ada.email, password: 'password123' })
    expect(taken.status).toBe(409)
    expect(taken.cookie).toBeNull()
    expect(shown(taken.text)).toContain('email has already been taken')
    const blank = await post(app, '/register', { username: '', email: '', password: '' })
    expect(blank.status).toBe(422)
    expect(shown(blank.text)).toContain("username can't be blank")
    expect(shown(blank.text)).toContain("password can't be blank")
    expect(await app.db.count('SELECT count(*) FROM users')).toBe(2)
  })

  test('the sidebar shows the 40 most used tags in the API’s order, and the next page load follows a write that reorders them', async () => {
    const { app, ada } = await site()
    const names = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(2, '0')}`)
    for (let i = 0; i < names.length; i += 20) await createArticle(app, ada.token, { tagList: names.slice(i, i + 20) })
    const sidebar = async () => {
      const page = (await get(app, '/')).text
      const list = /<div class="tag-list">(.*?)<\/div>/s.exec(page)?.[1] ?? ''
      return [...list.matchAll(/tag-pill">([^<]*)</g)].map((m) => m[1])
    }
    const apiTags = async () => (await app.request('GET', '/api/tags')).body.tags as string[]
    // each carried once: code-point order, intro among them
    expect(await sidebar()).toEqual((await apiTags()).slice(0, 40))
    expect(await sidebar()).toHaveLength(40)
    expect(await sidebar()).not.toContain('t59')
    await createArticle(app, ada.token, { tagList: ['t59'] })
    expect((await apiTags())[0]).toBe('t59')
    expect(await sidebar()).toEqual((await apiTags()).slice(0, 40))
  })

  test('text takes its direction from itself (dir="auto"): an article’s body, and every field a person types in', async () => {
    const { app, ada, slug } = await site()
    const arabic = await createArticle(app, ada.token, { title: 'مرحبا', body: '# عنوان\n\nهذا نص عربي.' })
    const page = (await get(app, `/article/${arabic.slug}`, { session: ada.token })).text
    expect(page).toMatch(/<div dir="auto"><h1>عنوان<\/h1>/)
    expect(page).toMatch(/<textarea dir="auto" id="comment-body"/)
    const editor = (await get(app, `/editor/${slug}`, { session: ada.token })).text
    for (const field of ['title', 'description', 'tags']) expect(editor).toMatch(new RegExp(`<input id="${field}" type="text" dir="auto"`))
    expect(editor).toMatch(/<textarea dir="auto" id="body"/)
    const settings = (await get(app, '/settings', { session: ada.token })).text
    expect(settings).toMatch(/<input id="username" [^>]*dir="auto"/)
    expect(settings).toMatch(/<textarea dir="auto" id="bio"/)
  })

  test('the address a refused comment’s page shows, reloaded or shared, is the article', async () => {
    const { app, slug } = await site()
    const res = await get(app, `/article/${slug}/comments`)
    expect({ status: res.status, location: res.location }).toEqual({ status: 303, location: `/article/${slug}` })
  })

  test('a tag that is a dot segment (. or ..) links to its own page, not one the browser resolves it to', async () => {
    const { app, ada } = await site()
    await createArticle(app, ada.token, { title: 'Dotted', tagList: ['.', '..'] })
    const home = await get(app, '/')
    for (const [tag, href] of [
      ['.', '/?tag=.'],
      ['..', '/?tag=..'],
    ] as const) {
      expect({ tag, linked: home.text.includes(`href="${href}"`) }).toEqual({ tag, linked: true })
      // what a browser requests for the link is the link itself (a path segment `..`, or `%2E%2E`, would be resolved away)
      const url = new URL(href, 'http://site.example/')
      expect(url.pathname + url.search).toBe(href)
      const page = await get(app, href)
      // the tag's articles only: not the site's first article, tagged intro
      const text = shown(page.text)
      expect({ tag, status: page.status, dotted: text.includes('Dotted'), other: text.includes('Hello there') }).toEqual({
        tag,
        status: 200,
        dotted: true,
        other: false,
      })
    }
    // an empty one is no filter: the global feed
    const empty = shown((await get(app, '/?tag=')).text)
    expect({ dotted: empty.includes('Dotted'), other: empty.includes('Hello there') }).toEqual({ dotted: true, other: true })
  })

  test(`an article shows its newest ${COMMENTS_PER_PAGE} comments, older ones on pages of their own; a new one is on the first`, async () => {
    const { app, ada, bob, slug } = await site()
    const n = 2 * COMMENTS_PER_PAGE + 5
    for (let i = 0; i < n; i++) await addComment(app, i % 2 ? ada.token : bob.token, slug, `comment number ${i}.`)
    const shownOn = async (path: string) => {
      const page = await get(app, path)
      expect({ path, status: page.status }).toEqual({ path, status: 200 })
      const numbers = [...shown(page.text).matchAll(/comment number (\d+)\./g)].map((m) => Number(m[1]))
      return { numbers, text: page.text }
    }
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
    const first = await shownOn(`/article/${slug}`)
    // the newest, oldest first as the API lists them; links to the older pages
    expect(first.numbers).toEqual(range(n - COMMENTS_PER_PAGE, n))
    expect(first.text).toContain(`href="/article/${slug}?page=3#comments"`)
    expect((await shownOn(`/article/${slug}?page=2`)).numbers).toEqual(range(5, n - COMMENTS_PER_PAGE))
    const last = await shownOn(`/article/${slug}?page=3`)
    expect(last.numbers).toEqual(range(0, 5))
    expect(last.text).toContain(`href="/article/${slug}#comments"`)
    const past = await shownOn(`/article/${slug}?page=4`)
    expect({ numbers: past.numbers, end: shown(past.text).includes('The comments end at page 3') }).toEqual({ numbers: [], end: true })
    // a new comment: on the first page at once, the oldest shown there moves to the second
    await addComment(app, bob.token, slug, `comment number ${n}.`)
    expect((await shownOn(`/article/${slug}`)).numbers).toEqual(range(n + 1 - COMMENTS_PER_PAGE, n + 1))
    expect((await shownOn(`/article/${slug}?page=2`)).numbers).toEqual(range(6, n + 1 - COMMENTS_PER_PAGE))
  }, 60_000)

  test('a tag no article can carry (U+0000) is a page of none, on both backends', async () => {
    const { app } = await site()
    for (const path of ['/tag/%00', '/?tag=%00', '/tag/a%00b']) {
      const page = await get(app, path)
      expect({ path, status: page.status, none: shown(page.text).includes('No articles are here') }).toEqual({
        path,
        status: 200,
        none: true,
      })
    }
  })

  test('signing in sends back where the reader was, but only to a page of this site', async () => {
    const { app, ada, slug } = await site()
    const login = (back: string) => post(app, `/login?back=${encodeURIComponent(back)}`, { email: ada.email, password: ada.password })
    expect((await login(`/article/${slug}`)).location).toBe(`/article/${slug}`)
    for (const back of [
      '//evil.example/',
      '/\\evil.example',
      '/\t/evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      // dot segments that resolve to a path beginning `//`
      '/.//evil.example',
      '/..//evil.example',
      '/%2e%2e//evil.example',
      '/./\\evil.example',
      '/x/..//evil.example',
    ])
      expect({ back, location: (await login(back)).location }).toEqual({ back, location: '/' })
  })

  test('every form that changes something refuses a post from another site, and changes nothing', async () => {
    const { app, ada, bob, slug } = await site()
    const comment = await addComment(app, ada.token, slug, 'First!')
    /** What the forms below would change, as the API reports it. */
    const state = async () => {
      const [user, article, comments, profile, list] = await Promise.all([
        app.request('GET', '/api/user', { token: ada.token }),
        app.request('GET', `/api/articles/${slug}`, { token: ada.token }),
        app.request('GET', `/api/articles/${slug}/comments`),
        app.request('GET', `/api/profiles/${bob.username}`, { token: ada.token }),
        app.request('GET', '/api/articles'),
      ])
      return {
        user: user.body.user.bio,
        article: article.body.article,
        comments: comments.body.comments.length,
        follows: profile.body.profile.following,
        articles: list.body.articlesCount,
      }
    }
    const before = await state()
    // (in this order, so that all but the last four can be sent for real below)
    const forms: [string, Record<string, string>][] = [
      ['/settings', { username: ada.username, email: ada.email, bio: 'changed', image: '' }],
      ['/editor', { title: 'Forged', description: 'd', body: 'b' }],
      [`/article/${slug}/favorite`, { on: '1' }],
      [`/article/${slug}/comments`, { body: 'forged' }],
      [`/article/${slug}/comments/${comment.id}/delete`, {}],
      [`/profile/${bob.username}/follow`, { on: '1' }],
      [`/editor/${slug}`, { title: 'Hello there', description: 'Forged', body: 'b' }],
      [`/article/${slug}/delete`, {}],
      ['/logout', {}],
      ['/login', { email: ada.email, password: ada.password }],
      ['/register', { username: unique('mallory'), email: `${unique('m')}@example.com`, password: 'password123' }],
    ]
    const foreign: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'none' },
      { 'sec-fetch-site': '', origin: 'http://evil.example' },
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost.evil.example' },
      { origin: 'ftp://localhost' },
      {},
    ]
    for (const [path, fields] of forms)
      for (const headers of foreign) {
        const h = { ...headers }
        if (h['sec-fetch-site'] === '') delete h['sec-fetch-site']
        const form = new URLSearchParams(fields).toString()
        const res = await request(app, 'POST', path, form, { session: ada.token, headers: h })
        expect({ path, headers, status: res.status, cookie: res.cookie }).toEqual({ path, headers, status: 403, cookie: null })
      }
    expect(await state()).toEqual(before)

    // the same forms from a page of this site do what they say (so the refusals above are not for another reason)
    const sameOrigin: Record<string, string>[] = [{ 'sec-fetch-site': 'same-origin' }, { origin: 'http://localhost' }]
    for (const headers of sameOrigin) {
      const res = await request(app, 'POST', `/article/${slug}/comments`, 'body=mine', { session: ada.token, headers })
      expect({ headers, status: res.status }).toEqual({ headers, status: 303 })
    }
    expect((await state()).comments).toBe(before.comments + 2)
    // a site over TLS (its own, or a trusted proxy's word): a page of the same host over http is another site
    const proxied = await testApp({ trustProxy: true }, app.db)
    const overTls: [TestApp, Options, number][] = [
      [app, { origin: 'https://localhost', headers: { origin: 'http://localhost' } }, 403],
      [proxied, { tls: true, headers: { origin: 'http://localhost', 'x-forwarded-proto': 'https' } }, 403],
      [app, { origin: 'https://localhost', headers: { origin: 'https://localhost' } }, 303],
      [proxied, { tls: true, headers: { origin: 'https://localhost', 'x-forwarded-proto': 'https' } }, 303],
      // behind a TLS proxy not trusted the scheme is unknown: either is taken
      [app, { headers: { origin: 'https://localhost', 'x-forwarded-proto': 'https' } }, 303],
    ]
    for (const [on, o, status] of overTls) {
      const res = await request(on, 'POST', `/article/${slug}/comments`, 'body=tls', { session: ada.token, ...o })
      expect({ o, status: res.status }).toEqual({ o, status })
    }
    expect((await state()).comments).toBe(before.comments + 5)
    for (const [path, fields] of forms.slice(0, 7)) {
      const res = await post(app, path, fields, { session: ada.token })
      expect({ path, status: res.status }).toEqual({ path, status: 303 })
    }
    const after = await state()
    expect(after.user).toBe('changed')
    expect(after.follows).toBe(true)
    expect(after.articles).toBe(before.articles + 1)
    expect(after.comments).toBe(before.comments + 5) // the forged one and the first deleted
    expect(after.article.description).toBe('Forged')
  })

  // each pill was checked against the × by a scan of the whole form: 40,000 of them held the loop for 8 s, signed out
  test('an editor form of 20,000 tags is read for its first 100, signed in or out; nothing is stored', async () => {
    const { app, ada } = await site()
    const before = await app.db.count('SELECT count(*) FROM articles')
    const tag = Array.from({ length: 20_000 }, (_, i) => `t${i}`)
    for (const session of [undefined, ada.token]) {
      const answer = await post(app, '/editor', { title: 't', description: 'd', body: 'b', tag, untag: 't5' }, { session })
      const pills = [...answer.text.matchAll(/<input type="hidden" name="tag" value="(t\d+)">/g)].map((m) => m[1])
      expect({ status: answer.status, pills: pills.length, first: pills.slice(0, 6) }).toEqual({
        status: session ? 200 : 401,
        pills: 100,
        first: ['t0', 't1', 't2', 't3', 't4', 't6'],
      })
    }
    expect(await app.db.count('SELECT count(*) FROM articles')).toBe(before)
  })

  test('a form’s errors come back on its page, with what was typed, and nothing is stored', async () => {
    const { app, ada, slug } = await site()
    const empty = await post(app, '/editor', { title: '', description: 'about', body: 'text', tag: ['kept'] }, { session: ada.token })
    expect(empty.status).toBe(422)
    expect(shown(empty.text)).toContain("title can't be blank")
    expect(empty.text).toContain('value="about"')
    expect(empty.text).toContain('value="kept"')
    // the tags field's limits, said as a person reads them (not the API's `tagList`)
    const long = await post(app, '/editor', { title: 't', description: 'd', body: 'b', tags: 'x'.repeat(41) }, { session: ada.token })
    expect(shown(long.text)).toContain('a tag is too long (maximum is 40 characters)')
    expect(long.text).toMatch(/<input id="tags"[^>]* aria-invalid="true"/)
    const many = Array.from({ length: 21 }, (_, i) => `t${i}`).join(',')
    expect(
      shown((await post(app, '/editor', { title: 't', description: 'd', body: 'b', tags: many }, { session: ada.token })).text),
    ).toContain('the article has too many tags (maximum is 20)')
    const bob = await post(
      app,
      '/settings',
      { username: ada.username, email: 'not an email', bio: 'new', image: '' },
      { session: ada.token },
    )
    expect(bob.status).toBe(422)
    expect(shown(bob.text)).toContain('email is invalid')
    // the refused field says so, and points at the errors, which take the focus; the others do not
    expect(bob.text).toMatch(/<input id="email"[^>]* aria-invalid="true" aria-describedby="form-errors">/)
    expect(bob.text).not.toMatch(/<input id="username"[^>]*aria-invalid/)
    expect(bob.text).toContain('<div role="alert" id="form-errors" class="form-errors" tabindex="-1" autofocus>')
    expect((await app.request('GET', '/api/user', { token: ada.token })).body.user.bio).toBeNull()
    expect((await app.request('GET', '/api/articles')).body.articlesCount).toBe(1)
    // a comment of spaces only: the article page with the API's error and the text as typed
    const blank = await post(app, `/article/${slug}/comments`, { body: '  \n ' }, { session: ada.token })
    expect(blank.status).toBe(422)
    expect(shown(blank.text)).toContain("body can't be blank")
    expect(shown(blank.text)).toContain('Hello there')
    expect(fieldValue(blank.text, 'body')).toBe('  \n ')
    expect(blank.text).toMatch(/<textarea dir="auto" id="comment-body"[^>]* aria-invalid="true" aria-describedby="form-errors">/)
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body.comments).toEqual([])

    // someone else's article: its editor and its forms are refused
    const other = await registerUser(app, { username: unique('zed') })
    expect((await get(app, `/editor/${slug}`, { session: other.token })).status).toBe(403)
    expect((await post(app, `/editor/${slug}`, { title: 'Mine now', description: 'd', body: 'b' }, { session: other.token })).status).toBe(
      403,
    )
    expect((await post(app, `/article/${slug}/delete`, {}, { session: other.token })).status).toBe(403)
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.title).toBe('Hello there')

    // a form larger than the limit (three times the API's: see formLimit) is refused before it is read
    const big = await post(app, `/article/${slug}/comments`, { body: 'x'.repeat(3 * app.config.bodyLimitBytes) }, { session: ada.token })
    expect(big.status).toBe(413)
    expect(shown(big.text)).toContain(`body is too large (maximum is ${3 * app.config.bodyLimitBytes} bytes)`)
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body.comments).toEqual([])

    // nor is one sent without a length: reading stops at the limit, not at the end of 16 times it
    let sent = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 16 * app.config.bodyLimitBytes) return controller.close()
        sent += 65536
        controller.enqueue(new Uint8Array(65536).fill(0x78))
      },
    })
    const headers = {
      accept: 'text/html',
      cookie: `${SESSION_COOKIE}=${ada.token}`,
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
    }
    const streamed = await app.app.respond(
      new Request(`http://localhost/article/${slug}/comments`, { method: 'POST', headers, body: endless }),
    )
    expect(streamed.status).toBe(413)
    expect(sent).toBeLessThan(3 * app.config.bodyLimitBytes + 4 * 65536)
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body.comments).toEqual([])
  })

  test('an article whose text the API takes is saved by the editor too, though its form is three times its UTF-8', async () => {
    const { app, ada } = await site()
    // 90,000 characters (the API takes 100,000) of 4 bytes each: 360 KB of JSON, ~1.08 MB as a form
    const body = '😀'.repeat(90_000)
    const res = await post(app, '/editor', { title: 'Smiles', description: 'many', body }, { session: ada.token })
    expect(res.status).toBe(303)
    const slug = decodeURIComponent(res.location!.slice('/article/'.length))
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.body).toBe(body)
  })

  test('an article changed after its editor was opened: the save comes back (409) with the draft, changing nothing; sent again, it saves', async () => {
    const { app, ada, slug } = await site()
    const opened = await get(app, `/editor/${slug}`, { session: ada.token })
    const seen = fieldValue(opened.text, 'seen')
    expect(seen).toBe((await app.request('GET', `/api/articles/${slug}`)).body.article.updatedAt)
    // another tab, or a client of the API, changes it meanwhile
    await Bun.sleep(5)
    const other = await app.request('PUT', `/api/articles/${slug}`, {
      token: ada.token,
      body: { article: { description: 'From the API' } },
    })
    expect(other.status).toBe(200)
    const draft = { seen, title: 'Hello there', description: 'From the editor', body: 'Edited *text*.', tag: 'intro' }
    const refused = await post(app, `/editor/${slug}`, draft, { session: ada.token })
    expect(refused.status).toBe(409)
    expect(shown(refused.text)).toContain('article was changed at')
    expect([fieldValue(refused.text, 'description'), fieldValue(refused.text, 'body')]).toEqual(['From the editor', 'Edited *text*.'])
    const after = (await app.request('GET', `/api/articles/${slug}`)).body.article
    expect([after.description, after.body]).toEqual(['From the API', 'Some *text*.'])
    // the page now carries the version it showed: sent again, the draft is saved
    expect(fieldValue(refused.text, 'seen')).toBe(after.updatedAt)
    const saved = await post(app, `/editor/${slug}`, { ...draft, seen: fieldValue(refused.text, 'seen') }, { session: ada.token })
    expect(saved.status).toBe(303)
    expect((await app.request('GET', `/api/articles/${slug}`)).body.article.description).toBe('From the editor')
    // a form without the field (sent before this check existed) is saved as before
    const { seen: _, ...old } = draft
    expect((await post(app, `/editor/${slug}`, { ...old, description: 'No version' }, { session: ada.token })).status).toBe(303)
  })

  test('settings changed after their page was opened: the update comes back (409), changing nothing; sent again, it saves', async () => {
    const { app, ada } = await site()
    const opened = await get(app, '/settings', { session: ada.token })
    const seen = fieldValue(opened.text, 'seen')
    // another tab, or a client of the API, changes the bio meanwhile
    expect((await app.request('PUT', '/api/user', { token: ada.token, body: { user: { bio: 'From the API' } } })).status).toBe(200)
    const draft = { seen, username: ada.username, email: ada.email, bio: 'From the page', image: '' }
    const refused = await post(app, '/settings', draft, { session: ada.token })
    expect(refused.status).toBe(409)
    expect(shown(refused.text)).toContain('settings were changed after this page was opened')
    expect(fieldValue(refused.text, 'bio')).toBe('From the page')
    expect((await app.request('GET', '/api/user', { token: ada.token })).body.user.bio).toBe('From the API')
    const again = await post(app, '/settings', { ...draft, seen: fieldValue(refused.text, 'seen') }, { session: ada.token })
    expect(again.status).toBe(303)
    const session = tokenOf(again.cookie) ?? ada.token
    expect((await app.request('GET', '/api/user', { token: session })).body.user.bio).toBe('From the page')
  })

  test('the editor and the settings sent back unedited change nothing, whatever line breaks their text holds', async () => {
    const { app, ada } = await site()
    const text = {
      title: 'Two\nlines title',
      description: 'About\r\ntwo lines',
      body: '\nIndented code after a blank first line:\n\n    x = 1\n\nSent with CRLF\r\nand a lone CR\rto the API.\n',
    }
    const mine = await createArticle(app, ada.token, { ...text, tagList: ['t'] })
    const profile = { bio: '\nline one\r\nline two', image: 'not a URL,\r\nin two lines' }
    expect((await app.request('PUT', '/api/user', { token: ada.token, body: { user: profile } })).status).toBe(200)
    const article = async (s: string) => {
      const { title, description, body, tagList } = (await app.request('GET', `/api/articles/${s}`)).body.article
      return JSON.stringify({ slug: s, title, description, body, tagList })
    }
    const me = async () => {
      const { username, email, bio, image } = (await app.request('GET', '/api/user', { token: ada.token })).body.user
      return JSON.stringify({ username, email, bio, image })
    }
    // (as JSON: a CR that differs shows in a failure's diff)
    const [articleBefore, userBefore] = [await article(mine.slug), await me()]

    // each page holds the text exactly, as far as its field can (an input drops line breaks, a textarea shows CR as LF)
    const editor = await get(app, `/editor/${mine.slug}`, { session: ada.token })
    const shownEditor = {
      title: fieldValue(editor.text, 'title'),
      description: fieldValue(editor.text, 'description'),
      body: fieldValue(editor.text, 'body'),
    }
    expect(shownEditor).toEqual({
      title: 'Twolines title',
      description: 'Abouttwo lines',
      body: text.body.replace(/\r\n?/g, '\n'),
    })
    const saved = await post(
      app,
      `/editor/${mine.slug}`,
      { title: shownEditor.title, description: shownEditor.description, body: sent(shownEditor.body), tag: 't' },
      { session: ada.token },
    )
    expect({ status: saved.status, location: saved.location }).toEqual({ status: 303, location: `/article/${mine.slug}` })
    expect(await article(mine.slug)).toBe(articleBefore)

    const settings = await get(app, '/settings', { session: ada.token })
    const shownSettings = { bio: fieldValue(settings.text, 'bio'), image: fieldValue(settings.text, 'image') }
    expect(shownSettings).toEqual({ bio: '\nline one\nline two', image: 'not a URL,in two lines' })
    const savedSettings = await post(
      app,
      '/settings',
      { image: shownSettings.image, username: ada.username, bio: sent(shownSettings.bio), email: ada.email, password: '' },
      { session: ada.token },
    )
    expect(savedSettings.status).toBe(303)
    expect(await me()).toBe(userBefore)
  })

  test('what a browser sends of a textarea is stored with LF: a comment, an edit, a bio; a refused comment comes back as typed', async () => {
    const { app, ada, slug } = await site()
    const posted = await post(app, `/article/${slug}/comments`, { body: '\r\nfirst\r\nsecond\r' }, { session: ada.token })
    expect(posted.status).toBe(303)
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body.comments.map((c: { body: string }) => c.body)).toEqual([
      '\nfirst\nsecond\n',
    ])
    const refused = await post(app, `/article/${slug}/comments`, { body: sent('\n\n  ') }, { session: ada.token })
    expect(refused.status).toBe(422)
    expect(fieldValue(refused.text, 'body')).toBe('\n\n  ')

    // (no browser sends a lone CR: a textarea holds none; if one comes, it is a line break too)
    const edited = await post(
      app,
      `/editor/${slug}`,
      { title: 'Hello there, edited', description: 'A description', body: 'edited\r\nin two\rlines\r\n', tag: 'intro' },
      { session: ada.token },
    )
    expect({ status: edited.status, location: edited.location }).toEqual({ status: 303, location: '/article/hello-there-edited' })
    const article = (await app.request('GET', '/api/articles/hello-there-edited')).body.article
    expect([article.title, article.body]).toEqual(['Hello there, edited', 'edited\nin two\nlines\n'])
    const bio = await post(
      app,
      '/settings',
      { image: '', username: ada.username, bio: '\r\nnew\r\nbio', email: ada.email },
      { session: ada.token },
    )
    expect(bio.status).toBe(303)
    expect((await app.request('GET', '/api/user', { token: ada.token })).body.user.bio).toBe('\nnew\nbio')
  })

  test('a session whose token no longer works is ended, and the page is served signed out', async () => {
    const { app, ada } = await site()
    for (const session of ['not-a-token', `${ada.token.slice(0, -4)}AAAA`]) {
      const res = await get(app, '/', { session })
      expect(res.status).toBe(200)
      expect(res.cookie).toBe(`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`)
      expect(res.text).toContain('href="/login"')
    }
    // a password changed elsewhere revokes the session's token (the changer's own token is kept)
    const other = await app.request('POST', '/api/users/login', { body: { user: { email: ada.email, password: ada.password } } })
    const put = await app.request('PUT', '/api/user', { token: other.body.user.token, body: { user: { password: 'a-new-password' } } })
    expect(put.status).toBe(200)
    const revoked = await get(app, '/settings', { session: ada.token })
    expect({ status: revoked.status, location: revoked.location }).toEqual({ status: 303, location: '/login' })
    expect(revoked.cookie).toContain('Max-Age=0')
  })

  test('an action comes back to where it was taken; buttons and pages are named for what they are', async () => {
    const { app, ada, bob, slug } = await site()
    const title = (text: string) => /<title>(.*?) — Conduit<\/title>/.exec(text)?.[1]
    // a favorite from a list: back to the article's place in it, its button named for the article
    const home = await get(app, '/?page=1', { session: bob.token })
    expect(home.text).toContain(`<div class="article-preview" id="article-${slug}">`)
    expect(home.text).toContain('aria-label="Favorite (0): Hello there"')
    expect(home.text).not.toContain('aria-pressed')
    const fav = await post(app, `/article/${slug}/favorite`, { back: `/?page=1#article-${slug}`, on: '1' }, { session: bob.token })
    expect(fav.location).toBe(`/?page=1#article-${slug}`)
    expect((await get(app, '/', { session: bob.token })).text).toContain('aria-label="Unfavorite (1): Hello there"')
    // a comment posted or deleted: back to the comments
    const commented = await post(app, `/article/${slug}/comments`, { body: 'Hi' }, { session: bob.token })
    expect(commented.location).toBe(`/article/${slug}#comments`)
    const page = await get(app, `/article/${slug}`, { session: bob.token })
    expect(page.text).toContain('id="comments"')
    const id = /action="[^"]*\/comments\/(\d+)\/delete"/.exec(page.text)![1]
    expect(page.text).toMatch(new RegExp(`aria-label="Delete the comment by ${bob.username} of [^"]+"`))
    expect((await post(app, `/article/${slug}/comments/${id}/delete`, {}, { session: bob.token })).location).toBe(
      `/article/${slug}#comments`,
    )
    // the settings' fields are filled: their labels are shown, not only read out
    const settings = (await get(app, '/settings', { session: ada.token })).text
    for (const [id, label] of [
      ['image', 'URL of profile picture'],
      ['username', 'Username'],
      ['bio', 'Short bio about you'],
      ['email', 'Email'],
      ['password', 'New password (leave empty to keep it)'],
    ])
      expect(settings).toContain(`<label class="form-label" for="${id}">${label}</label>`)
    // a page past the last says where the list ends
    expect((await get(app, '/?page=99')).text).toContain('This list ends at <a href="/">page 1</a>.')
    // titles say which page it is
    expect(title((await get(app, '/?feed=following', { session: bob.token })).text)).toBe('Your Feed')
    expect(title((await get(app, `/profile/${ada.username}/favorites`)).text)).toBe(`Articles favorited by ${ada.username}`)
    expect(title((await get(app, '/editor', { session: ada.token })).text)).toBe('New article')
    expect(title((await get(app, `/editor/${slug}`, { session: ada.token })).text)).toBe('Edit article')
  })

  test('an article or a comment sent after the session ended comes back as typed (401), to be sent again once signed in', async () => {
    const { app, ada, slug } = await site()
    const gone = `${ada.token.slice(0, -4)}AAAA`
    const draft = { title: 'Kept title', description: 'Kept description', body: 'A long text\nworth keeping', tags: 'one, two' }
    const article = await post(app, '/editor', draft, { session: gone })
    expect(article.status).toBe(401)
    expect(shown(article.text)).toContain('you are signed out: your session ended before this was sent')
    expect(article.text).toContain('<a href="/login" target="_blank">Sign in in a new tab</a>')
    expect({ title: fieldValue(article.text, 'title'), body: fieldValue(article.text, 'body') }).toEqual({
      title: 'Kept title',
      body: 'A long text\nworth keeping',
    })
    expect(article.text).toContain('value="one"')
    const comment = await post(app, `/article/${slug}/comments`, { body: 'A kept comment' }, { session: gone })
    expect(comment.status).toBe(401)
    expect(shown(comment.text)).toContain('you are signed out')
    expect(fieldValue(comment.text, 'body')).toBe('A kept comment')
    // nothing was written; sent again with a session, each is
    expect((await app.request('GET', '/api/articles')).body.articlesCount).toBe(1)
    expect((await app.request('GET', `/api/articles/${slug}/comments`)).body.comments).toEqual([])
    expect((await post(app, `/article/${slug}/comments`, { body: 'A kept comment' }, { session: ada.token })).status).toBe(303)
    expect((await post(app, '/editor', draft, { session: ada.token })).status).toBe(303)
    expect((await app.request('GET', '/api/articles')).body.articlesCount).toBe(2)
  })

  test('changing the password in the settings keeps the session on a new token; every older one stops working, the old cookie’s too', async () => {
    const { app, ada } = await site()
    const elsewhere = (await app.request('POST', '/api/users/login', { body: { user: { email: ada.email, password: ada.password } } })).body
      .user.token
    // a copy of the cookie taken before the change (a stolen session) ends with it
    const before = ada.token
    const res = await post(
      app,
      '/settings',
      { username: ada.username, email: ada.email, bio: '', image: '', password: 'a-new-password' },
      { session: ada.token },
    )
    expect({ status: res.status, location: res.location }).toEqual({ status: 303, location: `/profile/${ada.username}` })
    const session = tokenOf(res.cookie)!
    expect((await get(app, '/settings', { session })).status).toBe(200)
    expect(session).not.toBe(before)
    expect((await app.request('GET', '/api/user', { token: elsewhere })).status).toBe(401)
    expect((await app.request('GET', '/api/user', { token: before })).status).toBe(401)
    expect((await get(app, '/settings', { session: before })).status).toBe(303)
    // the API's own rule is unchanged: there the token that sends the change keeps working
    const api = await app.request('PUT', '/api/user', { token: session, body: { user: { password: 'a-third-password' } } })
    expect(api.status).toBe(200)
    expect((await app.request('GET', '/api/user', { token: session })).status).toBe(200)
    const login = await post(app, '/login', { email: ada.email, password: 'a-third-password' })
    expect(login.status).toBe(303)
  })
})

describe('pages are kept, and dropped, as exactly as the API’s answers', () => {
  /** A page twice: the second is the kept one, when it is kept. */
  const twice = async (app: TestApp, path: string, session?: string) => {
    const first = await get(app, path, { session })
    const second = await get(app, path, { session })
    expect(second.text).toBe(first.text)
    return shown(second.text)
  }

  test('the pages are kept: an anonymous reader’s in the shared slab, a user’s in theirs', async () => {
    const { app, ada, slug } = await site()
    await twice(app, `/article/${slug}`)
    await twice(app, `/article/${slug}`, ada.token)
    expect(app.app.caches.responses.get(`page /article/${slug}`)).toBeDefined()
    const id = (await app.db.get<{ id: number }>('SELECT id FROM users WHERE username = ?', ada.username))!.id
    expect(app.app.caches.viewerResponses.get(`${id} page /article/${slug}`)).toBeDefined()
  })

  test('a page is kept only under the parameters it reads: made-up ones do not fill the cache', async () => {
    const { app, slug } = await site()
    const size = () => app.app.caches.responses.size
    await twice(app, `/article/${slug}`)
    await twice(app, '/?page=2')
    await twice(app, '/login?back=%2Fsettings')
    const kept = size()
    for (let i = 0; i < 20; i++) {
      for (const path of [`/article/${slug}?x=${i}`, `/?page=2&x=${i}`, `/login?junk=${i}`]) {
        const res = await get(app, path)
        expect({ path, status: res.status }).toEqual({ path, status: 200 })
      }
    }
    expect(size()).toBe(kept)
  })

  test('an article’s body is rendered once per text: other readers, made-up parameters and an edit', async () => {
    const { app, ada, bob, slug } = await site()
    const bodies = app.app.caches.named<string, { source: string; html: string }>('bodies')
    const rendered = () => bodies.misses
    await get(app, `/article/${slug}`)
    const once = rendered()
    for (let i = 0; i < 5; i++) {
      for (const session of [undefined, ada.token, bob.token]) {
        const page = await get(app, `/article/${slug}?x=${i}`, { session })
        expect(page.text).toContain('<p>Some <em>text</em>.</p>')
      }
    }
    expect(rendered()).toBe(once)
    // the kept HTML counts only for the text it was rendered from
    await app.request('PUT', `/api/articles/${slug}`, { token: ada.token, body: { article: { body: 'Other **text**.' } } })
    const edited = await get(app, `/article/${slug}?x=after`, { session: bob.token })
    expect(edited.text).toContain('<p>Other <strong>text</strong>.</p>')
    expect(edited.text).not.toContain('Some <em>text</em>')
  })

  test(`a body longer than ${INLINE_CHARS} characters is rendered on its lane, as on the event loop, and kept`, async () => {
    const { app, ada, bob } = await site()
    const long = `# Long\n\n${'A paragraph with a [link](https://example.com/) and *emphasis*.\n\n'.repeat(120)}<script>x</script>`
    expect(long.length).toBeGreaterThan(INLINE_CHARS)
    const article = await createArticle(app, ada.token, { title: 'A long one', body: long })
    const bodies = app.app.caches.named('bodies')
    const pages = await Promise.all(
      [undefined, ada.token, bob.token, undefined].map((session, i) => get(app, `/article/${article.slug}?r=${i}`, { session })),
    )
    const html = renderMarkdown(long)
    expect(html).toContain('&lt;script&gt;')
    for (const page of pages) {
      expect(page.status).toBe(200)
      expect(page.text).toContain(html)
    }
    // four readers at once, then a fifth served what was kept
    expect(bodies.size).toBe(1)
    expect((await get(app, `/article/${article.slug}?r=next`)).text).toContain(html)
    expect(bodies.hits).toBeGreaterThan(0)
  })

  // markdown-it pads a short row with empty cells: a wide header over rows of one character made 43 MB of HTML
  test(`a body makes at most ${TABLE_CELLS} table cells, on the event loop or its lane; the rest is text; a real table is whole`, async () => {
    const { app, ada } = await site()
    const wide = `|${'a|'.repeat(250)}\n|${'-|'.repeat(250)}\n${'x\n'.repeat(300)}\n`
    const cells = (html: string) => (html.match(/<t[dh][ >]/g) ?? []).length
    for (const size of [3_500, 100_000]) {
      const body = wide.repeat(Math.ceil(size / wide.length)).slice(0, size)
      const { slug } = await createArticle(app, ada.token, { body })
      const page = await get(app, `/article/${slug}`)
      expect(page.status).toBe(200)
      expect({ size, within: cells(page.text) <= TABLE_CELLS, text: page.text.includes('<p>x\nx\nx') }).toEqual({
        size,
        within: true,
        text: true,
      })
    }
    // real tables whole up to the budget, counted as the rule counts columns (outer bars aside, an escaped one in a cell)
    for (const [header, row, rows] of [
      ['| a | b | c |\n|---|---|---|', '| 1 | 2 \\| 2 | 3 |', 3_000],
      ['| a | b |\n|---|---|', '| 1 | 2 |', 4_999],
      ['a | b\n--|--', '1 | 2', 4_999],
      ['| a |\n|---|', '| 1 |', 9_999],
    ] as const) {
      const columns = header
        .split('\n')[1]!
        .replaceAll(/^\||\|$/g, '')
        .split('|').length
      expect({ header, cells: cells(renderMarkdown(`${header}\n${`${row}\n`.repeat(rows)}`)) }).toEqual({
        header,
        cells: columns * (rows + 1),
      })
    }
  })

  test('every kind of write is on the next page load, for the reader who made it and for everyone else', async () => {
    const { app, ada, bob, slug } = await site()
    const pages = (path: string) => Promise.all([twice(app, path), twice(app, path, ada.token), twice(app, path, bob.token)])
    const article = `/article/${slug}`
    await pages('/')
    await pages(article)
    await pages(`/profile/${ada.username}`)
    await pages('/tag/intro')

    // a new article: home, the tag's page, the author's profile
    const created = await createArticle(app, bob.token, { title: 'Second post', tagList: ['intro', 'fresh'] })
    for (const text of await pages('/')) expect(text).toContain('Second post')
    for (const text of await pages('/')) expect(text).toContain('fresh') // popular tags
    for (const text of await pages('/tag/intro')) expect(text).toContain('Second post')

    // a favorite: the count on every page that shows the article; the favoriter's button
    await favorite(app, bob.token, slug)
    const [anon, , asBob] = await pages(article)
    expect(anon).toContain('Favorite Article (1)')
    expect(asBob).toContain('Unfavorite Article (1)')
    for (const text of await pages(`/profile/${bob.username}/favorites`)) expect(text).toContain('Hello there')

    // a follow: the follower's buttons and their feed
    await follow(app, ada.token, bob.username)
    expect((await pages(`/article/${created.slug}`))[1]).toContain(`Unfollow ${bob.username}`)
    expect(shown((await get(app, '/?feed=following', { session: ada.token })).text)).toContain('Second post')

    // a comment, then its deletion
    const c = await addComment(app, bob.token, slug, 'A comment to remove')
    for (const text of await pages(article)) expect(text).toContain('A comment to remove')
    expect((await app.request('DELETE', `/api/articles/${slug}/comments/${c.id}`, { token: bob.token })).status).toBe(204)
    for (const text of await pages(article)) expect(text).not.toContain('A comment to remove')

    // an edit of the article: its page, the lists
    expect(
      (await app.request('PUT', `/api/articles/${slug}`, { token: ada.token, body: { article: { title: 'Hello again' } } })).status,
    ).toBe(200)
    for (const text of await pages('/')) expect(text).toContain('Hello again')

    // the author's profile: every page that shows it, and the navbar of the author's own pages
    // (/tag/fresh shows only bob's article: as ada, only its navbar depends on ada)
    expect(await twice(app, '/tag/fresh', ada.token)).toContain(ada.username)
    const bio = await app.request('PUT', '/api/user', {
      token: ada.token,
      body: { user: { bio: 'Writes now.', username: `${ada.username}x` } },
    })
    expect(bio.status).toBe(200)
    const renamed = `${ada.username}x`
    for (const text of await pages('/')) expect(text).toContain(renamed)
    const own = await get(app, '/tag/fresh', { session: ada.token })
    expect(own.text).toContain(`href="/profile/${renamed}"><img class="user-pic"`)
    for (const text of await pages(`/profile/${renamed}`)) expect(text).toContain('Writes now.')

    // a deleted article: gone from every list, its page a 404
    expect((await app.request('DELETE', `/api/articles/${created.slug}`, { token: bob.token })).status).toBe(204)
    for (const text of await pages('/')) expect(text).not.toContain('Second post')
    expect((await get(app, `/article/${created.slug}`)).status).toBe(404)
  })

  test('a user’s page is never served to another reader', async () => {
    const { app, ada, bob } = await site()
    /** The user the navbar names, if any. */
    const navbarUser = (html: string) => /href="\/profile\/([^"]+)"[^>]*><img class="user-pic"/.exec(html)?.[1] ?? null
    for (const path of ['/', '/tag/intro', `/profile/${ada.username}`]) {
      expect(navbarUser((await get(app, path, { session: ada.token })).text)).toBe(ada.username)
      expect(navbarUser((await get(app, path)).text)).toBeNull()
      expect(navbarUser((await get(app, path, { session: bob.token })).text)).toBe(bob.username)
      expect(navbarUser((await get(app, path, { session: ada.token })).text)).toBe(ada.username)
    }
  })
})

describe('large answers over a socket', () => {
  test('a page or an API answer too large for the socket’s cork buffer arrives whole, kept or built', async () => {
    const app = await testApp()
    const ada = await registerUser(app, { username: unique('ada') })
    const titles: string[] = []
    for (let i = 0; i < 15; i++) {
      const article = await createArticle(app, ada.token, { description: `Part ${i} ${'of a long story, '.repeat(55)}ends.` })
      titles.push(article.title)
    }
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request, s) => app.app.respond(request, s) })
    try {
      // on a backend that reads the change log before each request, even a kept answer comes after I/O: one chunk of a stream (lateBody)
      const late = app.store.changes.sync() !== undefined
      const answers: [string, string][] = [
        ['/', 'text/html'],
        ['/api/articles', 'application/json'],
      ]
      for (const [path, accept] of answers) {
        for (const round of ['built', 'kept']) {
          const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers: { accept } })
          const text = await res.text()
          expect({ path, round, status: res.status }).toEqual({ path, round, status: 200 })
          expect(new TextEncoder().encode(text).byteLength).toBeGreaterThan(16 * 1024)
          // the home page shows the newest ten, the API's list all fifteen
          const from = path === '/' ? 5 : 0
          for (let i = from; i < 15; i++) expect(text).toContain(titles[i]!)
          for (let i = from; i < 15; i++) expect(text).toContain(`Part ${i} of a long story`)
          if (path === '/') expect(text.endsWith('</html>\n')).toBe(true)
          else expect(JSON.parse(text).articles).toHaveLength(15)
          // (a built one may have waited for a read too, on either backend)
          const chunked = res.headers.get('transfer-encoding') === 'chunked'
          if (round === 'kept') expect({ path, chunked }).toEqual({ path, chunked: late })
        }
      }
    } finally {
      await server.stop(true)
    }
  })
})
