import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { requireObjectWrapper, text } from '../http/validation.ts'
import { Profile } from '../profiles/schemas.ts'

export const NewCommentBody = t.Object({
  comment: t.Object({
    body: text('comment-body', 1, 20_000, { notBlank: true, description: 'stored exactly as sent; 1-20,000 characters, not blank' }),
  }),
})
export const Comment = t.Object({
  id: Type.Integer({ minimum: 1 }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  body: t.String(),
  author: Profile,
})
export const CommentResponse = t.Object({ comment: Comment })
export const CommentListResponse = t.Object({ comments: t.Array(Comment, { description: 'oldest first' }) })
export const CommentParams = t.Object({ slug: t.String(), id: t.String({ description: 'the comment id' }) })

/** The body is kept exactly as sent (Markdown); only the wrapper is checked before validation. */
export function normalizeCommentBody(body: unknown): void {
  requireObjectWrapper(body, 'comment')
}
