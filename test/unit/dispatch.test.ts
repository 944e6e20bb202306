import { describe, expect, test } from 'bun:test'
import { t } from 'elysia'
import { compile, fastRoutes, routeMatcher } from '../../src/http/dispatch.ts'
import { route } from '../../src/http/route.ts'

/**
 * What the fast path takes from a declaration besides its path: the route's
 * params schema, compiled, so a parameter the framework would refuse (422)
 * is never answered before it (such a path is not matched: the framework
 * answers it). Today's reads take any string; a future constrained one must
 * not make the two dispatchers differ.
 */
const read = { cached: () => undefined, build: async () => ({ value: '{}', deps: [] }) }
const numbered = route({
  method: 'GET',
  path: '/things/:n',
  operationId: 'GetThing',
  auth: 'none',
  params: t.Object({ n: t.String({ pattern: '^[0-9]+$' }) }),
  ok: { status: 200, schema: t.Object({}) },
  errors: [422],
  summary: 'a thing',
  tag: 'Things',
  read,
})
const open = route({
  method: 'GET',
  path: '/tags',
  operationId: 'GetTags',
  auth: 'none',
  ok: { status: 200, schema: t.Object({}) },
  errors: [],
  summary: 'tags',
  tag: 'Tags',
  read,
})

describe('the fast path and a route’s params schema', () => {
  test('a decoded parameter is checked against the declared schema', () => {
    const [c] = compile([numbered])
    expect(c!.paramsOk({ n: '42' })).toBe(true)
    expect(c!.paramsOk({ n: '4x' })).toBe(false)
    expect(c!.paramsOk({ n: '' })).toBe(false)
  })

  test('a route without a params schema takes any parameters', () => {
    const [c] = compile([open])
    expect(c!.paramsOk({})).toBe(true)
  })

  test('the fast path matches only parameters the schema takes; the router’s matcher finds the route either way', () => {
    const compiled = compile([numbered, open])
    const fast = fastRoutes(compiled)
    expect(fast('/api/things/7')?.params).toEqual({ n: '7' })
    expect(fast('/api/things/%37')?.params).toEqual({ n: '7' })
    expect(fast('/api/things/%34x')).toBeUndefined()
    expect(fast('/api/things/x')).toBeUndefined()
    expect(fast('/api/tags')?.compiled.template).toBe('/api/tags')
    // what the contract check uses: the route, whatever its parameters
    expect(routeMatcher(compiled)('/api/things/x')?.compiled.template).toBe('/api/things/:n')
  })
})
