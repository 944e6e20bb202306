import { Elysia, t } from 'elysia'
import type { VersionedCache } from '../db/changes.ts'
import { rawJson } from '../http/respond.ts'
import type { TagQueries } from './queries.ts'

export function tagRoutes({ tags, anonymous }: { tags: TagQueries; anonymous: VersionedCache }) {
  return new Elysia().get('/tags', ({ set, request }) => rawJson(anonymous.get(request.url, () => `{"tags":${tags.popular()}}`), set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
