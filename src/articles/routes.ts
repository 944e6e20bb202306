import { Elysia, t } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import { notFound } from '../errors.ts'
import { noContent, rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import { errors, jsonBody, tokenAuth } from '../http/schemas.ts'
import type { ListQueries } from './list.ts'
import type { ArticleQueries } from './queries.ts'
import {
  ArticleListResponse,
  ArticleResponse,
  FeedQuery,
  ListQuery,
  NewArticleBody,
  normalizeArticleBody,
  SlugParams,
  UpdateArticleBody,
} from './schemas.ts'

const tags = ['Articles']
const MAX_LIMIT = 100
const PAGE_PARAMS: ReadonlySet<string> = new Set(['limit', 'offset'])
const LIST_PARAMS: ReadonlySet<string> = new Set(['tag', 'author', 'favorited', 'limit', 'offset'])
const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
const page = (q: { limit?: string; offset?: string }) => ({
  limit: Math.min(Number(q.limit ?? 20), MAX_LIMIT),
  // past the end is an empty page, however far
  offset: Math.min(Number(q.offset ?? 0), Number.MAX_SAFE_INTEGER),
})

/** Articles, the feed and favorites. */
interface Deps {
  articles: ArticleQueries
  lists: ListQueries
  tokens: Tokens
  responses: ResponseCache
}

export function articleRoutes({ articles, lists, tokens, responses }: Deps) {
  const articleJson = (slug: string, viewer: number) => {
    const json = articles.json(slug, viewer)
    if (json === null) throw notFound('article')
    return `{"article":${json}}`
  }
  // Favorite and unfavorite differ only in direction; both answer the article.
  const favorite =
    (on: boolean) =>
    ({ params, viewer, set }: { params: { slug: string }; viewer: { id: number }; set: { headers: unknown } }) => {
      return rawJson(`{"article":${articles.setFavorite(viewer.id, params.slug, on)}}`, set)
    }
  const favoriteHook = (summary: string) => ({
    auth: true as const,
    params: SlugParams,
    response: { 200: ArticleResponse, 401: errors[401], 404: errors[404] },
    detail: { summary, tags: ['Favorites'], security: tokenAuth },
  })

  return new Elysia()
    .use(authPlugin(tokens))
    .get(
      '/articles',
      ({ query, viewer, set, request }) =>
        rawJson(
          responses.body(viewer, request.url, LIST_PARAMS, (id) =>
            lists.list(
              { tag: asList(query.tag), author: asList(query.author), favorited: asList(query.favorited) },
              page(query),
              id,
            ),
          ),
          set,
        ),
      {
        optionalAuth: true,
        query: ListQuery,
        response: { 200: ArticleListResponse, 401: errors[401], 422: errors[422] },
        detail: {
          summary: 'List articles',
          description:
            'Newest first. `tag`, `author` and `favorited` may each be repeated (ANY of the values); different parameters combine with AND.',
          tags,
          security: [{}, ...tokenAuth],
        },
      },
    )
    .get('/articles/feed', ({ query, viewer, set, request }) => rawJson(responses.body(viewer, request.url, PAGE_PARAMS, (id) => lists.feed(page(query), id)), set), {
      auth: true,
      query: FeedQuery,
      response: { 200: ArticleListResponse, 401: errors[401], 422: errors[422] },
      detail: { summary: 'Feed: articles by followed users', tags, security: tokenAuth },
    })
    .post(
      '/articles',
      ({ body, viewer, set }) => rawJson(`{"article":${articles.create(viewer.id, body.article)}}`, set, 201),
      {
        auth: true,
        transform: ({ body }) => normalizeArticleBody(body),
        ...jsonBody,
        body: NewArticleBody,
        response: { 201: ArticleResponse, 400: errors[400], 401: errors[401], 422: errors[422] },
        detail: { summary: 'Create an article', tags, security: tokenAuth },
      },
    )
    .get('/articles/:slug', ({ params, viewer, set, request }) => rawJson(responses.body(viewer, request.url, NO_PARAMS, (id) => articleJson(params.slug, id)), set), {
      optionalAuth: true,
      params: SlugParams,
      response: { 200: ArticleResponse, 401: errors[401], 404: errors[404] },
      detail: { summary: 'Get an article', tags, security: [{}, ...tokenAuth] },
    })
    .put(
      '/articles/:slug',
      ({ params, body, viewer, set }) =>
        rawJson(`{"article":${articles.update(viewer.id, params.slug, body.article)}}`, set),
      {
        auth: true,
        params: SlugParams,
        transform: ({ body }) => normalizeArticleBody(body),
        ...jsonBody,
        body: UpdateArticleBody,
        response: { 200: ArticleResponse, 400: errors[400], 401: errors[401], 403: errors[403], 404: errors[404], 422: errors[422] },
        detail: {
          summary: 'Update an article (author only)',
          description: 'A new title gives a new slug; the old slug then answers 404. `tagList` replaces the set.',
          tags,
          security: tokenAuth,
        },
      },
    )
    .delete(
      '/articles/:slug',
      ({ params, viewer, set }) => {
        articles.delete(viewer.id, params.slug)
        return noContent(set)
      },
      {
        auth: true,
        params: SlugParams,
        response: { 204: t.Void({ description: 'Deleted, with its comments, favorites and tag links' }), 401: errors[401], 403: errors[403], 404: errors[404] },
        detail: { summary: 'Delete an article (author only)', tags, security: tokenAuth },
      },
    )
    .post('/articles/:slug/favorite', favorite(true), favoriteHook('Favorite an article (idempotent)'))
    .delete('/articles/:slug/favorite', favorite(false), favoriteHook('Unfavorite an article (idempotent)'))
}
