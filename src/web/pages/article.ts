import type { ArticleReads } from '../../articles/reads.ts'
import type { CommentReads } from '../../comments/reads.ts'
import { HttpError } from '../../errors.ts'
import { type Api, errorLines, invalidFields } from '../api.ts'
import { type Ctx, type Outcome, redirect, use } from '../context.ts'
import { textarea, textareaText } from '../fields.ts'
import { html } from '../html.ts'
import { articlePath, avatar, date, profilePath } from '../layout.ts'
import type { BodyRenderer } from '../markdown.ts'
import {
  type ArticleJson,
  articleMeta,
  backTo,
  type CommentJson,
  errorList,
  favoriteButton,
  followButton,
  invalidAttrs,
  NONE_INVALID,
  pageNumber,
  pagination,
  SIGNED_OUT,
  signInBeside,
  signInThen,
  tagList,
} from './parts.ts'
import { orMissing } from './not-found.ts'

/**
 * Comments a page shows: the newest first page, older ones on `?page=N`. A thread of thousands
 * would make every view of the article compose and send them all (20,000: 11 MB, 200 ms).
 */
export const COMMENTS_PER_PAGE = 100

interface Deps {
  articles: ArticleReads
  comments: CommentReads
  bodies: BodyRenderer
}

/** A comment the API refused (or one sent signed out): its error lines, and what was typed, shown again in the form. */
interface RefusedComment {
  errors: readonly string[]
  body: string
  status: number
  /** the fields the errors name */
  invalid?: ReadonlySet<string>
}

/**
 * `/article/:slug`: the article, its body rendered from Markdown, its comments and the form to add
 * one (with a refused comment's errors and text, after a post).
 */
export function articlePage({ articles, comments, bodies }: Deps) {
  return async (ctx: Ctx, refused?: RefusedComment): Promise<Outcome & { kind: 'page' }> => {
    const slug = ctx.params.slug!
    const commentsPage = pageNumber(ctx.query)
    const [article, window] = await orMissing(
      Promise.all([
        articles.article(slug, ctx.viewerId),
        comments.window(slug, ctx.viewerId, COMMENTS_PER_PAGE, (commentsPage - 1) * COMMENTS_PER_PAGE),
      ]),
      'This article does not exist, or was deleted.',
    )
    const a = use<{ article: ArticleJson }>(ctx, article).article
    const list = use<{ comments: CommentJson[] }>(ctx, window.list).comments
    const here = articlePath(a.slug)
    const commentPages = Math.ceil(window.total / COMMENTS_PER_PAGE)
    const commentsAt = (n: number) => `${here}${n === 1 ? '' : `?page=${n}`}#comments`
    const olderComments =
      list.length === 0 && commentPages > 0
        ? html`<p>The comments end at <a href="${commentsAt(commentPages)}">page ${commentPages}</a>.</p>`
        : pagination(commentsPage, commentPages, commentsAt, 'Comment pages, the newest first')
    const body = await bodies.render(a.slug, a.body ?? '')
    const mine = ctx.viewer?.username === a.author.username
    const signedIn = ctx.viewer !== null
    const actions = mine
      ? html`<span class="article-actions-own">
<a class="btn btn-sm btn-outline-secondary" href="/editor/${encodeURIComponent(a.slug)}"><i class="ion-edit" aria-hidden="true"></i> Edit Article</a>
<form class="inline" method="post" action="${here}/delete"><button type="submit" class="btn btn-sm btn-outline-danger"><i class="ion-trash-a" aria-hidden="true"></i> Delete Article</button></form>
</span>`
      : html`${followButton(a.author, here)} ${favoriteButton(a, here, true)}`
    const comment = (c: CommentJson) => {
      const own = ctx.viewer?.username === c.author.username || mine
      return html`<div class="card">
<div class="card-block"><p class="card-text" dir="auto">${c.body}</p></div>
<div class="card-footer">
<a class="comment-author" href="${profilePath(c.author.username)}" tabindex="-1" aria-hidden="true"><img class="comment-author-img" src="${avatar(c.author.image)}" alt=""></a>
<a class="comment-author" href="${profilePath(c.author.username)}">${c.author.username}</a>
<span class="date-posted"><time datetime="${c.createdAt}">${date(c.createdAt)}</time></span>
${own ? html`<span class="mod-options"><form class="inline" method="post" action="${here}/comments/${String(c.id)}/delete"><button type="submit" class="icon-button" aria-label="Delete the comment by ${c.author.username} of ${date(c.createdAt)}"><i class="ion-trash-a" aria-hidden="true"></i></button></form></span>` : html``}
</div>
</div>`
    }
    const main = html`<div class="article-page">
<div class="banner">
<div class="container">
<h1 dir="auto">${a.title}</h1>
${articleMeta(a, actions)}
</div>
</div>
<div class="container page">
<div class="row article-content">
<div class="col-md-12">
<div dir="auto">${body}</div>
${tagList(a.tagList, true)}
</div>
</div>
<hr>
<div class="article-actions">${articleMeta(a, actions)}</div>
<div class="row">
<div class="col-xs-12 col-md-8 offset-md-2" id="comments">
<h2 class="visually-hidden">Comments</h2>
${
  signedIn || refused
    ? html`${errorList(refused?.errors ?? [], signedIn ? undefined : signInBeside)}<form class="card comment-form" method="post" novalidate action="${here}/comments">
<div class="card-block"><label class="visually-hidden" for="comment-body">Your comment</label>${textarea(html`id="comment-body" class="form-control" name="body" placeholder="Write a comment..." rows="3"${invalidAttrs(refused?.invalid ?? NONE_INVALID, 'body')}`, refused?.body ?? '')}</div>
<div class="card-footer"><img class="comment-author-img" src="${avatar(ctx.me?.image)}" alt=""><button type="submit" class="btn btn-sm btn-primary">Post Comment</button></div>
</form>`
    : html`<p><a href="${signInThen(here)}">Sign in</a> or <a href="/register">sign up</a> to add comments on this article.</p>`
}
${list.map(comment)}
${olderComments}
</div>
</div>
</div>
</div>`
    return { kind: 'page', status: refused?.status ?? 200, title: a.title, main, here: 'none' }
  }
}

/** The article's forms: delete, favorite, comment, delete a comment; each through the API, then back (a refused comment: the page with its errors). */
export function articleActions(api: Api, show: ReturnType<typeof articlePage>) {
  const signedIn = (ctx: Ctx) => ctx.token !== undefined && ctx.viewer !== null
  const slug = (ctx: Ctx) => encodeURIComponent(ctx.params.slug!)
  const signIn = (ctx: Ctx) => redirect(signInThen(backTo(ctx.form, articlePath(ctx.params.slug!))))
  return {
    async remove(ctx: Ctx): Promise<Outcome> {
      if (!signedIn(ctx)) return signIn(ctx)
      const res = await api(ctx.request, 'DELETE', `/articles/${slug(ctx)}`, { token: ctx.token })
      if (res.status !== 204) throw new HttpError(res.status, res.body?.errors ?? {})
      return redirect('/')
    },
    async favorite(ctx: Ctx): Promise<Outcome> {
      if (!signedIn(ctx)) return signIn(ctx)
      const on = ctx.form.get('on') !== '0'
      const res = await api(ctx.request, on ? 'POST' : 'DELETE', `/articles/${slug(ctx)}/favorite`, { token: ctx.token })
      if (res.status !== 200) throw new HttpError(res.status, res.body?.errors ?? {})
      return redirect(backTo(ctx.form, articlePath(ctx.params.slug!)))
    },
    async comment(ctx: Ctx): Promise<Outcome> {
      const body = textareaText(ctx.form.get('body') ?? '')
      if (!signedIn(ctx)) return show(ctx, { errors: SIGNED_OUT, body, status: 401 })
      const res = await api(ctx.request, 'POST', `/articles/${slug(ctx)}/comments`, { token: ctx.token, body: { comment: { body } } })
      if (res.status === 422) return show(ctx, { errors: errorLines(res), body, status: 422, invalid: invalidFields(res) })
      if (res.status !== 201) throw new HttpError(res.status, res.body?.errors ?? {})
      return redirect(`${articlePath(ctx.params.slug!)}#comments`)
    },
    async removeComment(ctx: Ctx): Promise<Outcome> {
      if (!signedIn(ctx)) return signIn(ctx)
      const res = await api(ctx.request, 'DELETE', `/articles/${slug(ctx)}/comments/${encodeURIComponent(ctx.params.id!)}`, {
        token: ctx.token,
      })
      if (res.status !== 204) throw new HttpError(res.status, res.body?.errors ?? {})
      return redirect(`${articlePath(ctx.params.slug!)}#comments`)
    },
  }
}
