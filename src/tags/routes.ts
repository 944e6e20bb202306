import { Elysia, t } from 'elysia'
import { keys } from '../cache/keys.ts'
import { rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import type { TagStore } from './store.ts'

export function tagRoutes({ tags, responses }: { tags: TagStore; responses: ResponseCache }) {
  // the same for every viewer: cached as the anonymous one
  const build = async () => ({ value: `{"tags":${JSON.stringify(await tags.popular())}}`, deps: [keys.tags] })
  return new Elysia().get('/tags', async ({ set, request }) => rawJson(await responses.body(null, request.url, NO_PARAMS, build), set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
