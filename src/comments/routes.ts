import { SlugParams } from '../articles/schemas.ts'
import { NO_CONTENT, type Route, reply, route } from '../http/route.ts'
import { commentJson } from './present.ts'
import type { CommentReads } from './reads.ts'
import { CommentListResponse, CommentParams, CommentResponse, NewCommentBody, normalizeCommentBody } from './schemas.ts'
import type { CommentWrites } from './writes.ts'

/** Path ids are decimal integers; anything else names no comment (404). */
const commentId = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN)

interface Deps {
  writes: CommentWrites
  reads: CommentReads
}

/** An article's comments. */
export function commentRoutes({ writes, reads }: Deps): Route[] {
  const tag = 'Comments'
  return [
    route({
      method: 'GET',
      path: '/articles/:slug/comments',
      operationId: 'GetArticleComments',
      auth: 'optional',
      params: SlugParams,
      ok: { status: 200, schema: CommentListResponse },
      errors: [404],
      summary: "An article's comments",
      tag,
      read: {
        cached: ({ params }, viewerId) => reads.cachedList(params.slug, viewerId),
        build: ({ params }, viewerId) => reads.list(params.slug, viewerId),
      },
    }),
    route({
      method: 'POST',
      path: '/articles/:slug/comments',
      operationId: 'CreateArticleComment',
      auth: 'required',
      params: SlugParams,
      body: NewCommentBody,
      normalize: normalizeCommentBody,
      ok: { status: 201, schema: CommentResponse },
      errors: [400, 401, 404, 413, 415, 422],
      summary: 'Comment on an article',
      tag,
      // a comment's author is the viewer, who never follows themselves
      handle: async ({ params, body, viewer }) =>
        reply(`{"comment":${commentJson(await writes.add(viewer.id, params.slug, body.comment.body, viewer), false)}}`, 201),
    }),
    route({
      method: 'DELETE',
      path: '/articles/:slug/comments/:id',
      operationId: 'DeleteArticleComment',
      auth: 'required',
      params: CommentParams,
      ok: { status: 204, schema: null, description: 'Deleted' },
      errors: [400, 401, 403, 404, 413, 415],
      summary: 'Delete a comment (its author or the article author)',
      description: 'A comment id that belongs to another article answers 404.',
      tag,
      handle: async ({ params, viewer }) => {
        await writes.delete(viewer, params.slug, commentId(params.id))
        return NO_CONTENT
      },
    }),
  ]
}
