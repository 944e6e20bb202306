import { NO_CONTENT, type Route, reply, route } from '../http/route.ts'
import { filtersOf, page } from './query.ts'
import { writtenJson } from './present.ts'
import type { ArticleReads } from './reads.ts'
import {
  ArticleListResponse,
  ArticleResponse,
  FeedQuery,
  ListQuery,
  NewArticleBody,
  normalizeArticleBody,
  normalizeArticleUpdate,
  SlugParams,
  UpdateArticleBody,
} from './schemas.ts'
import type { ArticleWrites } from './writes.ts'

interface Deps {
  writes: ArticleWrites
  reads: ArticleReads
}

/** Articles, the feed and favorites. */
export function articleRoutes({ writes, reads }: Deps): Route[] {
  const tag = 'Articles'
  // Favorite and unfavorite differ only in direction; both answer the article, and both are idempotent.
  const favorite = (on: boolean, summary: string) =>
    route({
      method: on ? 'POST' : 'DELETE',
      path: '/articles/:slug/favorite',
      operationId: on ? 'CreateArticleFavorite' : 'DeleteArticleFavorite',
      auth: 'required',
      params: SlugParams,
      ok: { status: 200, schema: ArticleResponse },
      errors: [400, 401, 404, 413, 415],
      summary,
      tag: 'Favorites',
      handle: async ({ params, viewer }) => reply(writtenJson(await writes.setFavorite(viewer, params.slug, on))),
    })

  return [
    route({
      method: 'GET',
      path: '/articles',
      operationId: 'GetArticles',
      auth: 'optional',
      query: ListQuery,
      ok: { status: 200, schema: ArticleListResponse },
      errors: [422],
      summary: 'List articles',
      description:
        'Newest first. `tag`, `author` and `favorited` may each be repeated (ANY of the values, at most 10 each); ' +
        'different parameters combine with AND. Values are literal: a comma is part of the value.',
      tag,
      read: {
        cached: ({ query }, viewerId) => reads.cachedList(filtersOf(query), page(query), viewerId),
        build: ({ query }, viewerId) => reads.list(filtersOf(query), page(query), viewerId),
      },
    }),
    route({
      method: 'GET',
      path: '/articles/feed',
      operationId: 'GetArticlesFeed',
      auth: 'required',
      query: FeedQuery,
      ok: { status: 200, schema: ArticleListResponse },
      errors: [401, 422],
      summary: 'Feed: articles by followed users',
      tag,
      read: {
        cached: ({ query }, viewerId) => reads.cachedFeed(page(query), viewerId),
        build: ({ query }, viewerId) => reads.feed(page(query), viewerId),
      },
    }),
    route({
      method: 'POST',
      path: '/articles',
      operationId: 'CreateArticle',
      auth: 'required',
      body: NewArticleBody,
      normalize: normalizeArticleBody,
      ok: { status: 201, schema: ArticleResponse },
      errors: [400, 401, 413, 415, 422],
      summary: 'Create an article',
      tag,
      handle: async ({ body, viewer }) => reply(writtenJson(await writes.create(viewer, body.article)), 201),
    }),
    route({
      method: 'GET',
      path: '/articles/:slug',
      operationId: 'GetArticle',
      auth: 'optional',
      params: SlugParams,
      ok: { status: 200, schema: ArticleResponse },
      errors: [404],
      summary: 'Get an article',
      tag,
      read: {
        cached: ({ params }, viewerId) => reads.cachedArticle(params.slug, viewerId),
        build: ({ params }, viewerId) => reads.article(params.slug, viewerId),
      },
    }),
    route({
      method: 'PUT',
      path: '/articles/:slug',
      operationId: 'UpdateArticle',
      auth: 'required',
      params: SlugParams,
      body: UpdateArticleBody,
      normalize: normalizeArticleUpdate,
      ok: { status: 200, schema: ArticleResponse },
      errors: [400, 401, 403, 404, 413, 415, 422],
      summary: 'Update an article (author only)',
      description:
        'A new title gives a new slug; the old slug then answers 404. `tagList` replaces the set (`[]` clears it, `null` is refused); left out, the tags stay.',
      tag,
      handle: async ({ params, body, viewer }) => reply(writtenJson(await writes.update(viewer, params.slug, body.article))),
    }),
    route({
      method: 'DELETE',
      path: '/articles/:slug',
      operationId: 'DeleteArticle',
      auth: 'required',
      params: SlugParams,
      ok: { status: 204, schema: null, description: 'Deleted, with its comments, favorites and tag links' },
      errors: [400, 401, 403, 404, 413, 415],
      summary: 'Delete an article (author only)',
      tag,
      handle: async ({ params, viewer }) => {
        await writes.delete(viewer, params.slug)
        return NO_CONTENT
      },
    }),
    favorite(true, 'Favorite an article (idempotent)'),
    favorite(false, 'Unfavorite an article (idempotent)'),
  ]
}
