import type { ArticleReads } from '../articles/reads.ts'
import type { Built } from '../cache/cache.ts'
import type { Caches } from '../cache/caches.ts'
import type { CommentReads } from '../comments/reads.ts'
import type { Config } from '../config.ts'
import { HttpError } from '../errors.ts'
import type { Tokens } from '../http/auth.ts'
import { readBody, tooLarge } from '../http/body.ts'
import { unavailable as databaseUnavailable, logUnavailable, UNAVAILABLE_RETRY_AFTER } from '../http/error-envelope.ts'
import { lateBody } from '../http/respond.ts'
import { pathAndQuery, pathOf } from '../http/url.ts'
import type { Logger } from '../log.ts'
import type { ProfileReads } from '../profiles/reads.ts'
import type { Api } from './api.ts'
import { errorLines } from './api.ts'
import { ASSETS_PREFIX, assets } from './assets.ts'
import { type Ctx, type Outcome, ReadQuery, redirect, viewerDeps } from './context.ts'
import { html } from './html.ts'
import { articlePath, page } from './layout.ts'
import { bodyRenderer } from './markdown.ts'
import { accountPages } from './pages/account.ts'
import { articleActions, articlePage } from './pages/article.ts'
import { editorPages } from './pages/editor.ts'
import { homePage } from './pages/home.ts'
import { errorPage, MissingPage, notFoundPage } from './pages/not-found.ts'
import { followAction, profilePage } from './pages/profile.ts'
import { Router } from './router.ts'
import { endSession, overTls, sameSite, sessionToken } from './session.ts'

/**
 * The page's own Content-Security-Policy: scripts, styles and fonts from this
 * site only, never inline; avatars are users' URLs (images only); forms post
 * to this site only.
 */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: http:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
const PAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'content-security-policy': PAGE_CSP,
}
const HTML = 'text/html; charset=utf-8'
/** A form's bytes are ASCII (percent-encoded); anything else is replaced, as URLSearchParams does with bad escapes. */
const FORM_TEXT = new TextDecoder()

interface Deps {
  config: Config
  logger: Logger
  caches: Caches
  tokens: Tokens
  articles: ArticleReads
  comments: CommentReads
  profiles: ProfileReads
  /** the `n` most used tags, kept as GET /api/tags's answer is */
  tags: (n: number) => () => Promise<Built<string>>
  api: Api
  /** closes what the app made (the lane of long bodies) with the store */
  own(resource: { close(): void }): void
}

type Handler = (ctx: Ctx) => Promise<Outcome>

/**
 * The Conduit web app, served at `/` by the same process as the API: pages
 * rendered here from the features' own cached reads (kept, and dropped, as
 * exactly as the API's answers), and forms that change something posted to
 * the API's own routes (the same rules, the same errors). See
 * docs/ARCHITECTURE.md, "The web app".
 */
export function webFeature(d: Deps) {
  const router = new Router<Handler>()
  const secure = (request: Request) => overTls(request, d.config.trustProxy)
  const account = accountPages({ api: d.api, ttlSeconds: d.config.tokenTtlSeconds, secure })
  const editor = editorPages(d.articles, d.api)
  const bodies = bodyRenderer(d.caches)
  d.own(bodies)
  const article = articlePage({ articles: d.articles, comments: d.comments, bodies })
  const actions = articleActions(d.api, article)
  const home = homePage({ articles: d.articles, tags: d.tags })
  router
    .add('GET', '/', home)
    .add('GET', '/tag/:tag', home)
    .add('GET', '/login', account.signIn)
    .add('POST', '/login', account.login)
    .add('GET', '/register', account.signUp)
    .add('POST', '/register', account.register)
    .add('GET', '/settings', account.settings)
    .add('POST', '/settings', account.saveSettings)
    .add('POST', '/logout', account.logout)
    .add('GET', '/editor', editor.show)
    .add('POST', '/editor', editor.submit)
    .add('GET', '/editor/:slug', editor.show)
    .add('POST', '/editor/:slug', editor.submit)
    .add('GET', '/article/:slug', (ctx) => article(ctx))
    .add('POST', '/article/:slug/delete', actions.remove)
    .add('POST', '/article/:slug/favorite', actions.favorite)
    .add('POST', '/article/:slug/comments', actions.comment)
    // the address a refused comment's page shows: reloaded or shared, it is the article
    .add('GET', '/article/:slug/comments', async (ctx) => redirect(articlePath(ctx.params.slug!)))
    .add('POST', '/article/:slug/comments/:id/delete', actions.removeComment)
    .add('GET', '/profile/:username', profilePage({ articles: d.articles, profiles: d.profiles }, false))
    .add('GET', '/profile/:username/favorites', profilePage({ articles: d.articles, profiles: d.profiles }, true))
    .add('POST', '/profile/:username/follow', followAction(d.api))
  const files = assets()

  /** The signed-in user a session's cookie names; an unusable one (expired, revoked) is signed out. */
  async function session(request: Request) {
    const token = sessionToken(request, secure(request))
    if (token === undefined) return { token, viewer: null, stale: false }
    try {
      const viewer = await d.tokens.authenticate(`Token ${token}`)
      return { token, viewer, stale: viewer === null }
    } catch (e) {
      if (e instanceof HttpError && e.status === 401) return { token: undefined, viewer: null, stale: true }
      throw e
    }
  }

  /**
   * Pages of anonymous readers are kept in the shared slab, a user's in theirs, under `page ` and
   * the path with query: the API's answers are kept there under the path alone, and `/` for a
   * program that asks for JSON must not find the page.
   */
  const cached = (viewerId: number, key: string) =>
    viewerId === 0 ? d.caches.responses.get(`page ${key}`) : d.caches.viewerResponses.get(`${viewerId} page ${key}`)
  const keep = (viewerId: number, key: string, body: string, deps: number[], at: number) =>
    viewerId === 0
      ? d.caches.responses.set(`page ${key}`, body, deps, at, 0)
      : d.caches.viewerResponses.set(`${viewerId} page ${key}`, body, deps, at, 0)

  /**
   * Read as the API reads a body: over the limit it is dropped while streaming, never buffered whole.
   * A form writes each byte of UTF-8 that is not ASCII as three (`%F0`): three times the API's limit
   * lets the site send any text the API takes.
   */
  const formLimit = 3 * d.config.bodyLimitBytes
  async function form(request: Request): Promise<URLSearchParams> {
    const length = Number(request.headers.get('content-length') ?? 0)
    if (length > formLimit) throw tooLarge(formLimit)
    const type = request.headers.get('content-type') ?? ''
    if (!type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams()
    return new URLSearchParams(FORM_TEXT.decode(await readBody(request, formLimit)))
  }

  const respond = (status: number, body: string | Uint8Array | null, headers: Record<string, string>, late = false) =>
    new Response(late && body !== null ? lateBody(body) : body, {
      status,
      // no-store: a page may show the reader's own data, and a browser's Back must not show it after
      // signing out, nor a page from before a write (with no-cache, history is shown unchecked)
      headers: { ...PAGE_HEADERS, 'content-type': HTML, 'cache-control': 'no-store', ...headers },
    })
  /** HEAD: no body, and the length the GET's would have (RFC 9110 9.3.2), where an empty body would say 0. */
  const respondTo = (request: Request, status: number, body: string | Uint8Array, headers: Record<string, string>, late: boolean) =>
    request.method === 'HEAD'
      ? respond(status, null, {
          ...headers,
          'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
        })
      : respond(status, body, headers, late)

  /** `late`: the request waited on I/O before it got here (see lateBody). */
  async function answer(request: Request, headers: Record<string, string>, late = false): Promise<Response> {
    const path = pathOf(request.url)
    if (path.startsWith(ASSETS_PREFIX)) {
      const file = request.method === 'GET' || request.method === 'HEAD' ? files(path.slice(ASSETS_PREFIX.length), headers) : undefined
      return file ?? respond(404, 'Not found', headers)
    }
    const match = router.match(request.method, path)
    const s = await session(request)
    const extra: Record<string, string> = { ...headers }
    // `/` is this page or, for a program that asks for JSON, the API's description (app.ts)
    if (path === '/') extra.vary = extra.vary ? `${extra.vary}, Accept` : 'Accept'
    if (s.stale) extra['set-cookie'] = endSession(secure(request))
    const viewerId = s.viewer?.id ?? 0
    const key = pathAndQuery(request.url)
    if (request.method === 'GET' || request.method === 'HEAD') {
      const hit = match ? cached(viewerId, key) : undefined
      if (hit) return respondTo(request, 200, hit.slice(), extra, late)
    } else if (!sameSite(request, d.config.trustProxy)) {
      return respond(403, 'This form may be sent from this site only.', { ...extra, 'content-type': 'text/plain; charset=utf-8' })
    }
    const at = d.caches.versions.clock
    const ctx: Ctx = {
      request,
      path,
      params: match?.params ?? {},
      query: new ReadQuery(key.includes('?') ? key.slice(key.indexOf('?') + 1) : ''),
      viewer: s.viewer,
      viewerId,
      token: s.viewer ? s.token : undefined,
      me: null,
      form: new URLSearchParams(),
      deps: request.method === 'GET' ? viewerDeps(viewerId) : null,
    }
    if (s.viewer) {
      const u = await d.profiles.byName(s.viewer.username)
      ctx.me = { username: u.username, bio: u.bio, image: u.image }
    }
    let outcome: Outcome
    try {
      if (!match) outcome = router.has(path) ? errorPage(ctx, 405, ['this page takes no such request']) : notFoundPage(ctx)
      else {
        if (request.method === 'POST') ctx.form = await form(request)
        outcome = await match.handler(ctx)
      }
    } catch (e) {
      if (e instanceof MissingPage) outcome = notFoundPage(ctx, e.message)
      else if (!(e instanceof HttpError) || e.status >= 500) throw e
      else
        outcome =
          e.status === 404 ? notFoundPage(ctx) : errorPage(ctx, e.status, errorLines({ status: e.status, body: { errors: e.errors } }))
    }
    if (outcome.kind === 'redirect') {
      const h: Record<string, string> = { ...extra, location: outcome.to }
      if (outcome.cookie) h['set-cookie'] = outcome.cookie
      return respond(303, null, h)
    }
    const body = page({ title: outcome.title, me: ctx.me, here: outcome.here ?? 'none', main: outcome.main }).value
    if (outcome.status === 200 && ctx.deps && match && request.method === 'GET' && ctx.query.allRead()) {
      // kept until anything it shows changes (the navbar's user among them: viewerDeps)
      keep(viewerId, key, body, ctx.deps, at)
    }
    return respondTo(request, outcome.status, body, extra, late)
  }

  /** A fault is a page too (500, logged); the database down, a 503 the browser may retry. */
  function failed(request: Request, e: unknown, headers: Record<string, string>): Response {
    const where = { method: request.method, path: pathOf(request.url) }
    const away = databaseUnavailable(e)
    const unavailable = away !== undefined
    if (away) logUnavailable(d.logger, { ...where, reason: away.reason })
    else d.logger.error('unhandled error', where, e)
    const message = unavailable ? 'The database is unavailable; try again shortly.' : 'Something went wrong on our side.'
    const title = unavailable ? 'Unavailable' : 'Something went wrong'
    // the site's own layout (its files need no database), signed out: who is signed in is not known
    const again = request.method === 'GET' ? html`<a href="${pathAndQuery(request.url)}">Try again</a>, or go` : html`Go`
    const main = html`<div class="container page error-page"><h1>${title}</h1><p>${message}</p><p>${again} <a href="/">to the home page</a>.</p></div>`
    return respond(unavailable ? 503 : 500, page({ title, me: null, here: 'none', main }).value, {
      ...headers,
      ...(unavailable ? { 'retry-after': UNAVAILABLE_RETRY_AFTER } : {}),
    })
  }

  return {
    /** A page's answer (its faults thrown, for `failed`). */
    handle: answer,
    failed,
    /** The route template of a request, as metrics label it. */
    template: (method: string, path: string): string =>
      path.startsWith(ASSETS_PREFIX) ? `${ASSETS_PREFIX}:file` : (router.match(method, path)?.template ?? 'page not found'),
    templates: [...router.templates, `${ASSETS_PREFIX}:file`, 'page not found'],
  }
}
