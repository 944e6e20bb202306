import { Elysia, t } from 'elysia'
import { rawJson } from '../http/respond.ts'
import type { TagQueries } from './queries.ts'

export function tagRoutes({ tags }: { tags: TagQueries }) {
  return new Elysia().get('/tags', ({ set }) => rawJson(`{"tags":${tags.popular()}}`, set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
