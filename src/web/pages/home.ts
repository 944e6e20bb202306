import { filtersOf } from '../../articles/query.ts'
import type { ArticleReads } from '../../articles/reads.ts'
import type { Built } from '../../cache/cache.ts'
import { type Ctx, type Outcome, redirect, use } from '../context.ts'
import { type Html, html } from '../html.ts'
import { type ArticleJson, articleList, PAGE_SIZE, pageNumber } from './parts.ts'
import { tagPath } from '../layout.ts'

interface Deps {
  articles: ArticleReads
  tags: (n: number) => () => Promise<Built<string>>
}

const NO_FILTERS = { tag: [], author: [], favorited: [] }
/** The most used tags the sidebar shows (the API lists them all: a site of many reads only these). */
const SIDEBAR_TAGS = 40

/**
 * The home page: the global feed, the signed-in user's feed (`?feed=following`)
 * or a tag's articles (`/tag/:tag`, or `/?tag=` for `.` and `..`), ten to a page (`?page=N`), and the
 * popular tags beside.
 */
export function homePage({ articles, tags: mostUsed }: Deps) {
  const tags = mostUsed(SIDEBAR_TAGS)
  // the tag list changes with new articles only: parsed once per list, not per page built
  const sidebars = new WeakMap<Built<string>, Html>()
  const sidebar = (ctx: Ctx, popular: Built<string>): Html => {
    let made = sidebars.get(popular)
    if (made === undefined) {
      const names = use<{ tags: string[] }>(ctx, popular).tags
      made = names.length
        ? html`<div class="tag-list">${names.map((t) => html`<a href="${tagPath(t)}" class="tag-default tag-pill">${t}</a>`)}</div>`
        : html`<div class="post-preview">No tags are here... yet.</div>`
      sidebars.set(popular, made)
    } else if (ctx.deps) for (const k of popular.deps) ctx.deps.push(k)
    return made
  }
  return async (ctx: Ctx): Promise<Outcome> => {
    // `/?tag=` for the tags no path can carry (tagPath)
    const tag = ctx.params.tag ?? (ctx.query.get('tag') || undefined)
    const following = tag === undefined && ctx.query.get('feed') === 'following'
    if (following && !ctx.viewer) return redirect('/login')
    const pageNo = pageNumber(ctx.query)
    const page = { limit: PAGE_SIZE, offset: (pageNo - 1) * PAGE_SIZE }
    const [listed, popular] = await Promise.all([
      following
        ? articles.feed(page, ctx.viewerId)
        : articles.list(tag === undefined ? NO_FILTERS : filtersOf({ tag: [tag] }), page, ctx.viewerId),
      tags(),
    ])
    const list = use<{ articles: ArticleJson[]; articlesCount: number }>(ctx, listed)
    const popularTags = sidebar(ctx, popular)
    const base = tag !== undefined ? tagPath(tag) : following ? '/?feed=following' : '/'
    const here = `${base}${pageNo > 1 ? `${base.includes('?') ? '&' : '?'}page=${pageNo}` : ''}`
    const tab = (href: string, label: string, active: boolean) =>
      html`<li class="nav-item"><a class="nav-link${active ? ' active' : ''}" href="${href}"${active ? html` aria-current="page"` : ''}>${label}</a></li>`
    const main = html`<div class="home-page">
${ctx.viewer ? html`` : html`<div class="banner"><div class="container"><h1 class="logo-font">conduit</h1><p>A place to share your knowledge.</p></div></div>`}
<div class="container page">
<div class="row">
<div class="col-md-9">
<div class="feed-toggle">
<ul class="nav nav-pills outline-active">
${ctx.viewer ? tab('/?feed=following', 'Your Feed', following) : html``}
${tab('/', 'Global Feed', !following && tag === undefined)}
${tag !== undefined ? tab(base, `#${tag}`, true) : html``}
</ul>
</div>
${articleList(list, {
  here,
  page: pageNo,
  base,
  empty: following ? html`Your feed is empty. Follow some authors, or read the <a href="/">Global Feed</a>.` : undefined,
})}
</div>
<div class="col-md-3">
<aside class="sidebar" aria-label="Popular tags">
<p>Popular Tags</p>
${popularTags}
</aside>
</div>
</div>
</div>
</div>`
    return { kind: 'page', status: 200, title: tag !== undefined ? `#${tag}` : following ? 'Your Feed' : 'Home', main, here: 'home' }
  }
}
