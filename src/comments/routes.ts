import { Elysia, t } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import { noContent, rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import { errors, jsonBody, tokenAuth } from '../http/schemas.ts'
import { SlugParams } from '../articles/schemas.ts'
import { commentJson, type CommentReads } from './reads.ts'
import type { CommentStore } from './store.ts'
import { CommentListResponse, CommentParams, CommentResponse, NewCommentBody, normalizeCommentBody } from './schemas.ts'

const tags = ['Comments']
/** Path ids are decimal integers; anything else names no comment (404). */
const commentId = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN)

interface Deps {
  comments: CommentStore
  reads: CommentReads
  tokens: Tokens
  responses: ResponseCache
}

export function commentRoutes({ comments, reads, tokens, responses }: Deps) {
  return new Elysia()
    .use(authPlugin(tokens))
    .get(
      '/articles/:slug/comments',
      async ({ params, viewer, set, request }) =>
        rawJson(await responses.body(viewer, request.url, NO_PARAMS, (id) => reads.list(params.slug, id)), set),
      {
        optionalAuth: true,
        params: SlugParams,
        response: { 200: CommentListResponse, 401: errors[401], 404: errors[404] },
        detail: { summary: "An article's comments", tags, security: [{}, ...tokenAuth] },
      },
    )
    .post(
      '/articles/:slug/comments',
      // a comment's author is the viewer, who never follows themselves
      async ({ params, body, viewer, set }) =>
        rawJson(`{"comment":${commentJson(await comments.add(viewer.id, params.slug, body.comment.body), false)}}`, set),
      {
        auth: true,
        params: SlugParams,
        transform: ({ body }) => normalizeCommentBody(body),
        ...jsonBody,
        body: NewCommentBody,
        response: { 200: CommentResponse, 400: errors[400], 401: errors[401], 404: errors[404], 422: errors[422] },
        detail: { summary: 'Comment on an article', tags, security: tokenAuth },
      },
    )
    .delete(
      '/articles/:slug/comments/:id',
      async ({ params, viewer, set }) => {
        await comments.delete(viewer, params.slug, commentId(params.id))
        return noContent(set)
      },
      {
        auth: true,
        params: CommentParams,
        response: { 204: t.Void({ description: 'Deleted' }), 401: errors[401], 403: errors[403], 404: errors[404] },
        detail: {
          summary: 'Delete a comment (its author or the article author)',
          description: 'A comment id that belongs to another article answers 404.',
          tags,
          security: tokenAuth,
        },
      },
    )
}
