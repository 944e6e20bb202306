import { iso } from '../articles/present.ts'
import { flat } from '../cache/cache.ts'
import { profileHead } from '../profiles/present.ts'
import type { CommentRow } from './store.ts'

/** A comment up to its author: `{"id":…,"createdAt":…,"updatedAt":…,"body":…,"author":` */
export const commentHead = (c: CommentRow): string =>
  flat(`{"id":${c.id},"createdAt":${iso(c.created_at)},"updatedAt":${iso(c.updated_at)},"body":${JSON.stringify(c.body)},"author":`)

/** A comment as the contract's JSON, seen by a viewer who follows its author or not. */
export const commentJson = (c: CommentRow, following: boolean): string => `${commentHead(c)}${profileHead(c)}${following}}}`
