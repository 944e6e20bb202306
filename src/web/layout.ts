import { version } from '../../package.json'
import { isHttpUrl } from '../http/validation.ts'
import { ASSETS_PREFIX } from './assets.ts'
import { type Html, html } from './html.ts'

/** Where the embedded files are served (assets.ts); the version in each URL lets browsers keep them a long time. */
export const asset = (file: string) => `${ASSETS_PREFIX}${file}?v=${version}`
export const DEFAULT_AVATAR = asset('default-avatar.svg')

/** The signed-in user as the navbar shows them. */
export interface Me {
  username: string
  email?: string
  bio: string | null
  image: string | null
}

/** An avatar's URL: the user's image when it is an http(s) URL, else the default (never a `javascript:` or `data:` URL). */
export const avatar = (image: string | null | undefined): string => (image && isHttpUrl(image) ? image : DEFAULT_AVATAR)

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
/** `November 27, 2026` (UTC), by hand: Intl's formatter stood out in a built page's profile */
export const date = (iso: string): string => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`
}

export const profilePath = (username: string) => `/profile/${encodeURIComponent(username)}`
export const articlePath = (slug: string) => `/article/${encodeURIComponent(slug)}`
/** A tag's page; the tags `.` and `..` in the query, as a browser resolves such a path segment away, `%2E` included (`/tag/..` is `/`). */
export const tagPath = (tag: string) =>
  tag === '.' || tag === '..' ? `/?tag=${encodeURIComponent(tag)}` : `/tag/${encodeURIComponent(tag)}`

/** Which navbar item is the current page. */
export type Here = 'home' | 'login' | 'register' | 'editor' | 'settings' | 'profile' | 'none'

function navbar(me: Me | null, here: Here): Html {
  const item = (href: string, label: Html | string, active: boolean) =>
    html`<li class="nav-item"><a class="nav-link${active ? ' active' : ''}" href="${href}"${active ? html` aria-current="page"` : ''}>${label}</a></li>`
  const items = me
    ? [
        item('/', 'Home', here === 'home'),
        item('/editor', html`<i class="ion-compose" aria-hidden="true"></i> New Article`, here === 'editor'),
        item('/settings', html`<i class="ion-gear-a" aria-hidden="true"></i> Settings`, here === 'settings'),
        item(profilePath(me.username), html`<img class="user-pic" src="${avatar(me.image)}" alt=""> ${me.username}`, here === 'profile'),
      ]
    : [item('/', 'Home', here === 'home'), item('/login', 'Sign in', here === 'login'), item('/register', 'Sign up', here === 'register')]
  return html`<nav class="navbar navbar-light" aria-label="Main">
<div class="container">
<a class="navbar-brand" href="/">conduit</a>
<ul class="nav navbar-nav pull-xs-right">${items}</ul>
</div>
</nav>`
}

/**
 * A whole page. The session's state is in `body`'s data attributes (app.js
 * exposes it as `window.__conduit_debug__`); no token is ever in a page.
 */
export function page(o: { title: string; me: Me | null; here: Here; main: Html }): Html {
  const state = o.me ? 'authenticated' : 'unauthenticated'
  const user = o.me ? JSON.stringify({ username: o.me.username, email: o.me.email ?? null, bio: o.me.bio, image: o.me.image }) : ''
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} — Conduit</title>
<link rel="stylesheet" href="${asset('style.css')}">
<link rel="icon" href="${asset('favicon.svg')}" type="image/svg+xml">
<script src="${asset('app.js')}" defer></script>
</head>
<body data-auth="${state}" data-user="${user}">
<a class="skip-link" href="#main">Skip to content</a>
${navbar(o.me, o.here)}
<main id="main">
${o.main}
</main>
<footer>
<div class="container">
<a href="/" class="logo-font">conduit</a>
<span class="attribution">A place to share your knowledge. <a href="/swagger">API documentation</a></span>
</div>
</footer>
</body>
</html>
`
}
