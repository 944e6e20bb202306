import type { Article } from '../../articles/schemas.ts'
import type { Comment } from '../../comments/schemas.ts'
import type { Profile } from '../../profiles/schemas.ts'
import { type Html, html } from '../html.ts'
import { articlePath, avatar, date, profilePath } from '../layout.ts'

/** An article as the API answers it (lists carry no body): the routes' own schemas' types. */
export type ArticleJson = Omit<typeof Article.static, 'body'> & { body?: string }
export type ProfileJson = typeof Profile.static
export type CommentJson = typeof Comment.static

/** Articles on a page of a list. */
export const PAGE_SIZE = 10

/** A form's hidden field: where to come back after the action (a path of this site only). */
export const back = (path: string) => html`<input type="hidden" name="back" value="${path}">`

/** Where a form's or a URL's `back` says to go: a path of this site, else `fallback`. */
export function backTo(fields: URLSearchParams, fallback: string): string {
  const b = fields.get('back')
  // resolved as a browser would (which drops tabs and newlines: `/\t/evil.example`), it must stay on this site
  if (!b?.startsWith('/')) return fallback
  const url = URL.parse(b, 'http://site.invalid')
  if (url?.origin !== 'http://site.invalid') return fallback
  // and so must what it resolves to: dot segments can leave a path that begins `//` (`/.//evil.example`)
  const path = url.pathname + url.search + url.hash
  return path.startsWith('//') ? fallback : path
}

/** The sign-in page, then back to `path`. */
export const signInThen = (path: string) => `/login?back=${encodeURIComponent(path)}`

/**
 * The API's errors as a list (`.error-messages`), and a note under them; nothing when there are none.
 * The page a refused form comes back on opens with focus on them, so a screen reader reads them
 * first and a keyboard goes on from there.
 */
export const errorList = (errors: readonly string[], note: Html = html``): Html =>
  errors.length
    ? html`<div role="alert" id="form-errors" class="form-errors" tabindex="-1" autofocus><ul class="error-messages">${errors.map((e) => html`<li>${e}</li>`)}</ul>${note}</div>`
    : html``

/** No field refused. */
export const NONE_INVALID: ReadonlySet<string> = new Set()

/** A field's attributes when the API refused its value: invalid, described by the errors above the form. */
export const invalidAttrs = (invalid: ReadonlySet<string>, name: string): Html =>
  invalid.has(name) ? html` aria-invalid="true" aria-describedby="form-errors"` : html``

/**
 * A form sent after its session ended (signed out in another tab, expired): it comes back with
 * what was typed, and signing in happens in another tab, so that nothing typed is lost.
 */
export const SIGNED_OUT = ['you are signed out: your session ended before this was sent'] as const
export const signInBeside = html`<p><a href="/login" target="_blank">Sign in in a new tab</a>, then send this again: what you wrote is kept below.</p>`

/** Who wrote an article and when: avatar, name, date. */
export function articleMeta(a: ArticleJson, extra: Html = html``): Html {
  return html`<div class="article-meta">
<a href="${profilePath(a.author.username)}" tabindex="-1" aria-hidden="true"><img src="${avatar(a.author.image)}" alt=""></a>
<div class="info"><a class="author" href="${profilePath(a.author.username)}">${a.author.username}</a><span class="date"><time datetime="${a.createdAt}">${date(a.createdAt)}</time></span></div>
${extra}
</div>`
}

/** An article's place in a list: the list comes back there after its favorite button. */
const previewId = (slug: string) => `article-${slug}`

/**
 * The favorite button: a form that turns the favorite on or off, then comes back to `here` (in a
 * list, to the article's place in it). Its label says the state (no `aria-pressed` besides: "Unfavorite,
 * pressed" said it twice); in a list it names the article, as ten alike would not, after the words it
 * shows (a name that holds the visible text whole is what a voice command says: WCAG 2.5.3).
 */
export function favoriteButton(a: ArticleJson, here: string, long: boolean): Html {
  const label = a.favorited ? (long ? 'Unfavorite Article' : 'Unfavorite') : long ? 'Favorite Article' : 'Favorite'
  const cls = a.favorited ? 'btn-primary' : 'btn-outline-primary'
  const named = long ? html`` : html` aria-label="${label} (${String(a.favoritesCount)}): ${a.title}"`
  // (signed out, the same form: its action asks to sign in first)
  const button = html`<button type="submit" class="btn btn-sm ${cls}${long ? '' : ' pull-xs-right'}"${named}><i class="ion-heart" aria-hidden="true"></i> ${label} <span class="counter">(${a.favoritesCount})</span></button>`
  const to = long ? here : `${here}#${encodeURIComponent(previewId(a.slug))}`
  return html`<form class="inline" method="post" action="${articlePath(a.slug)}/favorite">${back(to)}<input type="hidden" name="on" value="${a.favorited ? '0' : '1'}">${button}</form>`
}

/** The follow button: `Follow jake` / `Unfollow jake`. */
export function followButton(p: ProfileJson, here: string): Html {
  const label = `${p.following ? 'Unfollow' : 'Follow'} ${p.username}`
  const cls = p.following ? 'btn-secondary' : 'btn-outline-secondary'
  return html`<form class="inline" method="post" action="${profilePath(p.username)}/follow">${back(here)}<input type="hidden" name="on" value="${p.following ? '0' : '1'}"><button type="submit" class="btn btn-sm ${cls} action-btn"><i class="ion-plus-round" aria-hidden="true"></i> ${label}</button></form>`
}

/** An article in a list. */
export function preview(a: ArticleJson, here: string): Html {
  return html`<div class="article-preview" id="${previewId(a.slug)}">
${articleMeta(a, favoriteButton(a, here, false))}
<a href="${articlePath(a.slug)}" class="preview-link">
<h1 dir="auto">${a.title}</h1>
<p dir="auto">${a.description}</p>
<span>Read more...</span>
${tagList(a.tagList, true)}
</a>
</div>`
}

/** An article's tags. */
export const tagList = (tags: readonly string[], outline: boolean): Html =>
  tags.length
    ? html`<ul class="tag-list">${tags.map((t) => html`<li class="tag-default tag-pill${outline ? ' tag-outline' : ''}">${t}</li>`)}</ul>`
    : html``

/** A list of articles with its pages (`?page=N`); `base` is the list's path with its other parameters. */
export function articleList(
  list: { articles: ArticleJson[]; articlesCount: number },
  o: { here: string; page: number; base: string; empty?: Html },
): Html {
  const pages = Math.ceil(list.articlesCount / PAGE_SIZE)
  const sep = o.base.includes('?') ? '&' : '?'
  const href = (n: number) => (n === 1 ? o.base : `${o.base}${sep}page=${n}`)
  if (list.articles.length === 0) {
    // a page past the last (an old link, a list that shrank): where the list ends
    if (pages > 0)
      return html`<div class="article-preview empty-feed-message">This list ends at <a href="${href(pages)}">page ${pages}</a>.</div>`
    return html`<div class="article-preview empty-feed-message">${o.empty ?? 'No articles are here... yet.'}</div>`
  }
  return html`${list.articles.map((a) => preview(a, o.here))}
${pagination(o.page, pages, href, 'Pages')}`
}

/** The links to a list's pages (none for one page): at most ten around `current`, the first and the last. */
export function pagination(current: number, pages: number, href: (n: number) => string, label: string): Html {
  if (pages <= 1) return html``
  const pageLink = (n: number) =>
    html`<li class="page-item${n === current ? ' active' : ''}"><a class="page-link" href="${href(n)}"${n === current ? html` aria-current="page"` : ''}>${n}</a></li>`
  return html`<ul class="pagination" aria-label="${label}">${pageNumbers(current, pages).map(pageLink)}</ul>`
}

/** The page links shown: at most ten around the current page, the first and the last always. */
function pageNumbers(current: number, pages: number): number[] {
  const start = Math.max(1, Math.min(current - 4, pages - 9))
  const shown = new Set([1, pages])
  for (let n = start; n <= Math.min(pages, start + 9); n++) shown.add(n)
  return [...shown].sort((a, b) => a - b)
}

/** `?page=N` as a page number from 1 (anything else is page 1). */
export function pageNumber(query: URLSearchParams): number {
  const n = Number(query.get('page'))
  return Number.isInteger(n) && n >= 1 && n <= 100_000 ? n : 1
}
