import { t } from 'elysia'
import type { Built } from '../cache/cache.ts'
import { Flights } from '../cache/flights.ts'
import { keys } from '../keys/keys.ts'
import type { Versions } from '../keys/versions.ts'
import { type Route, route } from '../http/route.ts'
import type { TagReadSql } from './store.ts'

/**
 * GET /api/tags as JSON: the same for every viewer; with `limit`, the most
 * used only (the site's sidebar: a site of many tags reads and parses a few,
 * not all). Every new article bumps the tag list, and the requests that miss
 * it meanwhile share one read. The last list is kept until then: the web
 * app's pages read it on every build.
 */
export function tagsJson(tags: TagReadSql, versions: Versions, limit?: number): () => Promise<Built<string>> {
  const deps = [keys.tags]
  const reads = new Flights<0, Built<string>>(versions)
  const kept = { builtAt: -1, deps, built: Promise.resolve({ value: '', deps }) }
  return () => {
    if (kept.builtAt >= 0 && versions.revalidate(kept)) return kept.built
    const at = versions.clock
    return reads.share(
      0,
      deps,
      async () => {
        const built = { value: `{"tags":${JSON.stringify(await tags.popular(limit))}}`, deps }
        kept.builtAt = at
        kept.built = Promise.resolve(built)
        return built
      },
      at,
    )
  }
}

const TagsResponse = t.Object({ tags: t.Array(t.String(), { description: 'tags in use, most used first' }) })

export function tagRoutes(build: () => Promise<Built<string>>): Route[] {
  return [
    route({
      method: 'GET',
      path: '/tags',
      operationId: 'GetTags',
      auth: 'none',
      ok: { status: 200, schema: TagsResponse },
      errors: [],
      summary: 'Tags in use',
      tag: 'Tags',
      // the same for every viewer: each is served the anonymous answer
      read: { cached: () => undefined, build: () => build() },
    }),
  ]
}
