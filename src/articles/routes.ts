import { Elysia, t } from 'elysia'
import { authPlugin, type Tokens, type Viewer } from '../auth/plugin.ts'
import { noContent, rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import { errors, jsonBody, tokenAuth } from '../http/schemas.ts'
import { type ArticleReads, writtenJson } from './reads.ts'
import type { ArticleStore } from './store.ts'
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
import { filtersOf, LIST_PARAMS, page, PAGE_PARAMS } from './query.ts'

/** Articles, the feed and favorites. */
interface Deps {
  articles: ArticleStore
  reads: ArticleReads
  tokens: Tokens
  responses: ResponseCache
}

export function articleRoutes({ articles, reads, tokens, responses }: Deps) {
  // Favorite and unfavorite differ only in direction; both answer the article.
  const favorite =
    (on: boolean) =>
    async ({ params, viewer, set }: { params: { slug: string }; viewer: Viewer; set: { headers: unknown } }) =>
      rawJson(writtenJson(await articles.setFavorite(viewer, params.slug, on)), set)
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
      async ({ query, viewer, set, request }) => {
        const filters = filtersOf(query)
        return rawJson(await responses.body(viewer, request.url, LIST_PARAMS, (id) => reads.list(filters, page(query), id)), set)
      },
      {
        optionalAuth: true,
        query: ListQuery,
        response: { 200: ArticleListResponse, 401: errors[401], 422: errors[422] },
        detail: {
          summary: 'List articles',
          description:
            'Newest first. `tag`, `author` and `favorited` may each be repeated (ANY of the values, at most 10 each); different parameters combine with AND.',
          tags,
          security: [{}, ...tokenAuth],
        },
      },
    )
    .get(
      '/articles/feed',
      async ({ query, viewer, set, request }) =>
        rawJson(await responses.body(viewer, request.url, PAGE_PARAMS, (id) => reads.feed(page(query), id)), set),
      {
        auth: true,
        query: FeedQuery,
        response: { 200: ArticleListResponse, 401: errors[401], 422: errors[422] },
        detail: { summary: 'Feed: articles by followed users', tags, security: tokenAuth },
      },
    )
    .post('/articles', async ({ body, viewer, set }) => rawJson(writtenJson(await articles.create(viewer, body.article)), set, 201), {
      auth: true,
      transform: ({ body }) => normalizeArticleBody(body),
      ...jsonBody,
      body: NewArticleBody,
      response: { 201: ArticleResponse, 400: errors[400], 401: errors[401], 422: errors[422] },
      detail: { summary: 'Create an article', tags, security: tokenAuth },
    })
    .get(
      '/articles/:slug',
      async ({ params, viewer, set, request }) =>
        rawJson(await responses.body(viewer, request.url, NO_PARAMS, (id) => reads.article(params.slug, id)), set),
      {
        optionalAuth: true,
        params: SlugParams,
        response: { 200: ArticleResponse, 401: errors[401], 404: errors[404] },
        detail: { summary: 'Get an article', tags, security: [{}, ...tokenAuth] },
      },
    )
    .put(
      '/articles/:slug',
      async ({ params, body, viewer, set }) => rawJson(writtenJson(await articles.update(viewer, params.slug, body.article)), set),
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
      async ({ params, viewer, set }) => {
        await articles.delete(viewer, params.slug)
        return noContent(set)
      },
      {
        auth: true,
        params: SlugParams,
        response: {
          204: t.Void({ description: 'Deleted, with its comments, favorites and tag links' }),
          401: errors[401],
          403: errors[403],
          404: errors[404],
        },
        detail: { summary: 'Delete an article (author only)', tags, security: tokenAuth },
      },
    )
    .post('/articles/:slug/favorite', favorite(true), favoriteHook('Favorite an article (idempotent)'))
    .delete('/articles/:slug/favorite', favorite(false), favoriteHook('Unfavorite an article (idempotent)'))
}
