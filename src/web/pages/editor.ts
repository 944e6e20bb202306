import type { ArticleReads } from '../../articles/reads.ts'
import { type Api, errorLines, invalidFields } from '../api.ts'
import { type Ctx, type Outcome, redirect, uncacheable, use } from '../context.ts'
import { kept, seenField, textarea, textareaText } from '../fields.ts'
import { type Html, html } from '../html.ts'
import { articlePath } from '../layout.ts'
import { errorPage, orMissing } from './not-found.ts'
import { type ArticleJson, errorList, invalidAttrs, NONE_INVALID, SIGNED_OUT, signInBeside } from './parts.ts'

interface Draft {
  title: string
  description: string
  body: string
  tags: string[]
}

/**
 * The editor form. Tags are pills, each with its own hidden `tag` field;
 * app.js adds one when Enter is pressed in "Enter tags" and removes one when
 * its × is clicked. Without scripts, "Enter tags" takes tags separated by
 * commas, and a pill's × sends the form to have the pill taken off (`untag`):
 * the form comes back without it, nothing saved. The hidden first button is
 * the form's default, which Enter in a field presses: Publish, not a ×.
 */
function form(action: string, d: Draft, errors: readonly string[], seen?: string, note?: Html, invalid = NONE_INVALID) {
  return html`<div class="editor-page">
<div class="container page">
<div class="row">
<div class="col-md-10 offset-md-1 col-xs-12">
${errorList(errors, note)}
<form method="post" novalidate action="${action}" class="editor-form">
<button type="submit" hidden tabindex="-1">Publish</button>
${seenField(seen)}
<fieldset>
<fieldset class="form-group"><label class="visually-hidden" for="title">Article title</label><input id="title" type="text" dir="auto" class="form-control form-control-lg" name="title" placeholder="Article Title" value="${d.title}"${invalidAttrs(invalid, 'title')}></fieldset>
<fieldset class="form-group"><label class="visually-hidden" for="description">What's this article about?</label><input id="description" type="text" dir="auto" class="form-control" name="description" placeholder="What's this article about?" value="${d.description}"${invalidAttrs(invalid, 'description')}></fieldset>
<fieldset class="form-group"><label class="visually-hidden" for="body">Article (Markdown)</label>${textarea(html`id="body" class="form-control" rows="8" name="body" placeholder="Write your article (in markdown)"${invalidAttrs(invalid, 'body')}`, d.body)}</fieldset>
<fieldset class="form-group">
<label class="visually-hidden" for="tags">Tags</label><input id="tags" type="text" dir="auto" class="form-control" name="tags" placeholder="Enter tags" autocomplete="off"${invalidAttrs(invalid, 'tags')}>
<div class="tag-list">${d.tags.map((t) => html`<span class="tag-default tag-pill"><button type="submit" class="tag-remove" name="untag" value="${t}" aria-label="Remove the tag ${t}"><i class="ion-close-round" aria-hidden="true"></i></button>${t}<input type="hidden" name="tag" value="${t}"></span>`)}</div>
</fieldset>
<button class="btn btn-lg pull-xs-right btn-primary" type="submit">Publish Article</button>
</fieldset>
</form>
</div>
</div>
</div>
</div>`
}

/** Tags a submitted editor is read for: far past what an article may have (its API answers that), and a bound on a forged form's work. */
const FORM_TAGS = 100

/** The tags a submitted editor holds: its pills but the one whose × sent it, then what "Enter tags" still holds (commas separate them). */
const tagsOf = (f: URLSearchParams): string[] => {
  const untag = f.get('untag')
  const sent = [
    ...f
      .getAll('tag')
      .slice(0, FORM_TAGS + 1)
      .filter((t) => t !== untag),
    ...(f.get('tags') ?? '').split(',', FORM_TAGS + 1),
  ]
  return [...new Set(sent.map((t) => t.trim()).filter(Boolean))].slice(0, FORM_TAGS)
}

const draftOf = (f: URLSearchParams): Draft => ({
  title: f.get('title') ?? '',
  description: f.get('description') ?? '',
  body: textareaText(f.get('body') ?? ''),
  tags: tagsOf(f),
})

/** A draft submitted for `a`: each field sent back unedited keeps the article's own text (see fields.ts). */
const unedited = (a: ArticleJson, d: Draft): Draft => ({
  ...d,
  title: kept('input', d.title, a.title),
  description: kept('input', d.description, a.description),
  body: kept('textarea', d.body, a.body ?? ''),
})

/** `/editor` (new) and `/editor/:slug` (its author's only), and what they submit, through the API. */
export function editorPages(articles: ArticleReads, api: Api) {
  /** The article as stored: what the editor shows, and what a submitted draft is compared with. */
  const stored = async (ctx: Ctx, slug: string) =>
    use<{ article: ArticleJson }>(
      ctx,
      await orMissing(articles.article(slug, ctx.viewerId), 'This article does not exist, or was deleted.'),
    ).article
  const page = (ctx: Ctx, main: ReturnType<typeof form>, status = 200): Outcome => {
    const title = ctx.params.slug === undefined ? 'New article' : 'Edit article'
    return { kind: 'page', status, title, main: html`<h1 class="visually-hidden">${title}</h1>${main}`, here: 'editor' }
  }
  return {
    async show(ctx: Ctx): Promise<Outcome> {
      if (!ctx.viewer) return redirect('/login')
      uncacheable(ctx)
      const slug = ctx.params.slug
      if (slug === undefined) return page(ctx, form('/editor', { title: '', description: '', body: '', tags: [] }, []))
      const a = await stored(ctx, slug)
      if (a.author.username !== ctx.viewer.username) return errorPage(ctx, 403, ['article forbidden: only its author may edit it'])
      const d = { title: a.title, description: a.description, body: a.body ?? '', tags: a.tagList }
      return page(ctx, form(`/editor/${encodeURIComponent(a.slug)}`, d, [], a.updatedAt))
    },
    async submit(ctx: Ctx): Promise<Outcome> {
      if (!ctx.viewer || !ctx.token)
        return page(ctx, form(ctx.path, draftOf(ctx.form), SIGNED_OUT, ctx.form.get('seen') ?? undefined, signInBeside), 401)
      // a pill's × without scripts: the form again without that tag, nothing saved
      if (ctx.form.has('untag')) {
        uncacheable(ctx)
        return page(ctx, form(ctx.path, draftOf(ctx.form), [], ctx.form.get('seen') ?? undefined))
      }
      const slug = ctx.params.slug
      const now = slug === undefined ? undefined : await stored(ctx, slug)
      // changed since this editor was opened (another tab, another device, a client of the API):
      // saving would silently replace that change, so the draft comes back first, to be sent again
      const seen = ctx.form.get('seen')
      if (now && seen !== null && seen !== now.updatedAt && now.author.username === ctx.viewer.username) {
        uncacheable(ctx)
        const changed = `article was changed at ${now.updatedAt}, after this editor was opened: publish again to replace that change with the text below`
        return page(ctx, form(ctx.path, draftOf(ctx.form), [changed], now.updatedAt), 409)
      }
      const d = now === undefined ? draftOf(ctx.form) : unedited(now, draftOf(ctx.form))
      const article = { title: d.title, description: d.description, body: d.body, tagList: d.tags }
      const res =
        slug === undefined
          ? await api(ctx.request, 'POST', '/articles', { token: ctx.token, body: { article } })
          : await api(ctx.request, 'PUT', `/articles/${encodeURIComponent(slug)}`, { token: ctx.token, body: { article } })
      if (res.status === 200 || res.status === 201) return redirect(articlePath(res.body.article.slug))
      uncacheable(ctx)
      // nothing written: the form keeps the version it was opened on
      if (res.status === 422) return page(ctx, form(ctx.path, d, errorLines(res), seen ?? undefined, undefined, invalidFields(res)), 422)
      return errorPage(ctx, res.status, errorLines(res))
    },
  }
}
