import { Elysia, t } from 'elysia'
import type { Built } from '../cache/cache.ts'
import { Flights } from '../cache/flights.ts'
import { keys } from '../cache/keys.ts'
import type { Versions } from '../cache/versions.ts'
import { rawJson } from '../http/respond.ts'
import { NO_PARAMS, type ResponseCache } from '../http/responses.ts'
import type { TagStore } from './store.ts'

/**
 * GET /api/tags as JSON: the same for every viewer. Every new article bumps
 * the tag list, and the requests that miss it meanwhile share one read.
 */
export function tagsJson(tags: TagStore, versions: Versions): () => Promise<Built<string>> {
  const deps = [keys.tags]
  const reads = new Flights<0, Built<string>>(versions)
  return () => reads.share(0, deps, async () => ({ value: `{"tags":${JSON.stringify(await tags.popular())}}`, deps }))
}

export function tagRoutes({ build, responses }: { build: () => Promise<Built<string>>; responses: ResponseCache }) {
  // cached as the anonymous one
  return new Elysia().get('/tags', async ({ set, request }) => rawJson(await responses.body(null, request.url, NO_PARAMS, build), set), {
    response: { 200: t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) }) },
    detail: { summary: 'Tags in use', tags: ['Tags'] },
  })
}
