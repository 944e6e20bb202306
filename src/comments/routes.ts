import { Elysia, t } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import { noContent, rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import { errors, jsonBody, tokenAuth } from '../http/schemas.ts'
import { SlugParams } from '../articles/schemas.ts'
import type { CommentQueries } from './queries.ts'
import { CommentListResponse, CommentParams, CommentResponse, NewCommentBody, normalizeCommentBody } from './schemas.ts'

const tags = ['Comments']
/** Path ids are decimal integers; anything else names no comment (404). */
const commentId = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN)

export function commentRoutes({ comments, tokens, responses }: { comments: CommentQueries; tokens: Tokens; responses: ResponseCache }) {
  return new Elysia()
    .use(authPlugin(tokens))
    .get(
      '/articles/:slug/comments',
      ({ params, viewer, set, request }) => {
        return rawJson(responses.body(viewer, request.url, NO_PARAMS, (id) => `{"comments":${comments.list(params.slug, id)}}`), set)
      },
      {
      optionalAuth: true,
      params: SlugParams,
      response: { 200: CommentListResponse, 401: errors[401], 404: errors[404] },
      detail: { summary: "An article's comments", tags, security: [{}, ...tokenAuth] },
      },
    )
    .post(
      '/articles/:slug/comments',
      ({ params, body, viewer, set }) => rawJson(`{"comment":${comments.add(viewer.id, params.slug, body.comment.body)}}`, set),
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
      ({ params, viewer, set }) => {
        comments.delete(viewer.id, params.slug, commentId(params.id))
        return noContent(set)
      },
      {
        auth: true,
        params: CommentParams,
        response: { 204: t.Void({ description: 'Deleted' }), 401: errors[401], 403: errors[403], 404: errors[404] },
        detail: {
          summary: 'Delete a comment (its author or the article author)',
          description: "A comment id that belongs to another article answers 404.",
          tags,
          security: tokenAuth,
        },
      },
    )
}
