import { Elysia, t } from 'elysia'
import { keys } from '../cache/keys.ts'
import { rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import type { TagStore } from './store.ts'

/** GET /api/tags as JSON: the same for every viewer. */
export const tagsJson = (tags: TagStore) => async () => ({ value: `{"tags":${JSON.stringify(await tags.popular())}}`, deps: [keys.tags] })

export function tagRoutes({ tags, responses }: { tags: TagStore; responses: ResponseCache }) {
  // cached as the anonymous one
  const build = tagsJson(tags)
  return new Elysia().get('/tags', async ({ set, request }) => rawJson(await responses.body(null, request.url, NO_PARAMS, build), set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
