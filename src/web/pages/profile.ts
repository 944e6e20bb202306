import type { ArticleReads } from '../../articles/reads.ts'
import { HttpError } from '../../errors.ts'
import { usernameKey } from '../../names.ts'
import type { ProfileReads } from '../../profiles/reads.ts'
import type { Api } from '../api.ts'
import { type Ctx, type Outcome, redirect, use } from '../context.ts'
import { html } from '../html.ts'
import { avatar, profilePath } from '../layout.ts'
import { orMissing } from './not-found.ts'
import { type ArticleJson, articleList, backTo, followButton, PAGE_SIZE, type ProfileJson, pageNumber, signInThen } from './parts.ts'

interface Deps {
  articles: ArticleReads
  profiles: ProfileReads
}

/** `/profile/:username` (their articles) and `/profile/:username/favorites` (what they favorited). */
export function profilePage({ articles, profiles }: Deps, favorites: boolean) {
  return async (ctx: Ctx): Promise<Outcome> => {
    const username = ctx.params.username!
    const read = orMissing(profiles.profile(username, ctx.viewerId), 'There is no user by this name.')
    const p = use<{ profile: ProfileJson }>(ctx, await read).profile
    const pageNo = pageNumber(ctx.query)
    const page = { limit: PAGE_SIZE, offset: (pageNo - 1) * PAGE_SIZE }
    const key = usernameKey(p.username)
    const filters = { tag: [], author: favorites ? [] : [key], favorited: favorites ? [key] : [] }
    const list = use<{ articles: ArticleJson[]; articlesCount: number }>(ctx, await articles.list(filters, page, ctx.viewerId))
    const base = `${profilePath(p.username)}${favorites ? '/favorites' : ''}`
    const here = `${base}${pageNo > 1 ? `?page=${pageNo}` : ''}`
    const mine = ctx.viewer?.username === p.username
    const tab = (href: string, label: string, active: boolean) =>
      html`<li class="nav-item"><a class="nav-link${active ? ' active' : ''}" href="${href}"${active ? html` aria-current="page"` : ''}>${label}</a></li>`
    const main = html`<div class="profile-page">
<div class="user-info">
<div class="container">
<div class="row">
<div class="col-xs-12 col-md-10 offset-md-1">
<img src="${avatar(p.image)}" class="user-img" alt="">
<h4>${p.username}</h4>
<p dir="auto">${p.bio ?? ''}</p>
${mine ? html`<a class="btn btn-sm btn-outline-secondary action-btn" href="/settings"><i class="ion-gear-a" aria-hidden="true"></i> Edit Profile Settings</a>` : followButton(p, here)}
</div>
</div>
</div>
</div>
<div class="container">
<div class="row">
<div class="col-xs-12 col-md-10 offset-md-1">
<div class="articles-toggle">
<ul class="nav nav-pills outline-active">
${tab(profilePath(p.username), 'My Articles', !favorites)}
${tab(`${profilePath(p.username)}/favorites`, 'Favorited Articles', favorites)}
</ul>
</div>
${articleList(list, { here, page: pageNo, base })}
</div>
</div>
</div>
</div>`
    const title = favorites ? `Articles favorited by ${p.username}` : p.username
    return { kind: 'page', status: 200, title, main, here: mine ? 'profile' : 'none' }
  }
}

/** The follow button's form: through the API, then back. */
export function followAction(api: Api) {
  return async (ctx: Ctx): Promise<Outcome> => {
    if (!ctx.token || !ctx.viewer) return redirect(signInThen(backTo(ctx.form, profilePath(ctx.params.username!))))
    const on = ctx.form.get('on') !== '0'
    const res = await api(ctx.request, on ? 'POST' : 'DELETE', `/profiles/${encodeURIComponent(ctx.params.username!)}/follow`, {
      token: ctx.token,
    })
    if (res.status !== 200) throw new HttpError(res.status, res.body?.errors ?? {})
    return redirect(backTo(ctx.form, profilePath(ctx.params.username!)))
  }
}
