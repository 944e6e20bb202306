import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { unprocessable } from '../errors.ts'
import { paging } from '../http/schemas.ts'
import { isBlank, requireObjectWrapper, text } from '../http/validation.ts'
import { Profile } from '../profiles/schemas.ts'
import { MAX_FILTER_VALUES } from './query.ts'

const Title = text('title', 1, 200, { notBlank: true, description: 'trimmed; 1-200 characters, not blank' })
const Description = text('description', 1, 1000, { notBlank: true, description: 'trimmed; 1-1,000 characters, not blank' })
const Body = text('article-body', 1, 100_000, {
  notBlank: true,
  description: 'Markdown, stored exactly as sent; 1-100,000 characters, not blank',
})
// a tag is a one-line label; U+001F also separates the tags SQLite's reads hand back (articleColumns)
const controls = (v: string) => (/\p{Cc}/u.test(v) ? 'must not contain control characters' : undefined)
// 0, not 1: a blank tag is dropped before validation, not refused
const TagList = t.Array(text('tag', 0, 40, { problem: controls }), {
  maxItems: 20,
  description: 'each tag trimmed, blank ones dropped, duplicates removed; at most 20 of 1-40 characters',
})

export const NewArticleBody = t.Object({
  article: t.Object({ title: Title, description: Description, body: Body, tagList: t.Optional(TagList) }),
})
const UPDATABLE = ['title', 'description', 'body', 'tagList'] as const
export const UpdateArticleBody = t.Object({
  article: t.Object(
    {
      title: t.Optional(Title),
      description: t.Optional(Description),
      body: t.Optional(Body),
      tagList: t.Optional(TagList),
    },
    { minProperties: 1, description: 'at least one of the fields, as for the user' },
  ),
})
export type NewArticle = (typeof NewArticleBody.static)['article']
export type ArticleChanges = (typeof UpdateArticleBody.static)['article']

const articleFields = {
  slug: t.String(),
  title: t.String(),
  description: t.String(),
  tagList: t.Array(t.String(), { description: 'unique, sorted ascending' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  favorited: t.Boolean(),
  favoritesCount: Type.Integer({ minimum: 0 }),
  author: Profile,
}
export const Article = t.Object({ ...articleFields, body: t.String() })
export const ArticleResponse = t.Object({ article: Article })
export const ArticleListResponse = t.Object({
  articles: t.Array(t.Object(articleFields), { description: 'newest first; list items carry no body' }),
  articlesCount: Type.Integer({ minimum: 0, description: 'all articles matching the filters, not the page size' }),
})

/** A filter: the parameter repeated for several values, each literal (a comma is part of a value). */
const Names = (what: string) =>
  t.Array(t.String(), {
    maxItems: MAX_FILTER_VALUES,
    itemsName: 'values',
    description: `${what}; repeat the parameter for several values (ANY of them, at most ${MAX_FILTER_VALUES})`,
  })
const Paging = paging('articles')
export const ListQuery = t.Object({
  tag: t.Optional(Names('a tag, matched exactly')),
  author: t.Optional(Names("an author's username")),
  favorited: t.Optional(Names('the username of someone who favorited the article')),
  ...Paging,
})
export const FeedQuery = t.Object(Paging)
export const SlugParams = t.Object({ slug: t.String() })

type Loose = { article?: Record<string, unknown> }

/**
 * Runs before validation: title, description and tags are trimmed, blank and repeated
 * tags dropped (so limits apply to what is stored). A null tagList is refused
 * (RealWorld 2.0): leave it out to keep the tags, send [] to clear them.
 */
export function normalizeArticleBody(body: unknown): void {
  requireObjectWrapper(body, 'article')
  const a = (body as Loose | null)?.article
  if (!a || typeof a !== 'object') return
  // the body is Markdown: its leading and trailing spaces are kept
  for (const k of ['title', 'description'] as const) {
    if (typeof a[k] === 'string') a[k] = (a[k] as string).trim()
  }
  if (Array.isArray(a.tagList) && a.tagList.every((x) => typeof x === 'string')) {
    a.tagList = [...new Set((a.tagList as string[]).map((x) => x.trim()).filter((x) => !isBlank(x)))]
  }
}

/** An update names at least one field it knows (as the user's must: an empty one would only move updatedAt); then as normalizeArticleBody. */
export function normalizeArticleUpdate(body: unknown): void {
  normalizeArticleBody(body)
  const a = (body as Loose | null)?.article
  if (a && typeof a === 'object' && !UPDATABLE.some((k) => k in a)) throw unprocessable({ article: ['must have at least one field'] })
}
