import { Elysia, t } from 'elysia'
import { rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import type { TagQueries } from './queries.ts'

export function tagRoutes({ tags, responses }: { tags: TagQueries; responses: ResponseCache }) {
  // the same for every viewer: cached as the anonymous one
  return new Elysia().get('/tags', ({ set, request }) => rawJson(responses.body(null, request.url, NO_PARAMS, () => `{"tags":${tags.popular()}}`), set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
