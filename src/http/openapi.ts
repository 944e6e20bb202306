import type { TObject, TSchema } from '@sinclair/typebox'
import { API_PREFIX } from './url.ts'
import type { ErrorStatus, Route } from './route.ts'
import { ErrorBody } from './schemas.ts'

/** What each error status means, wherever a route may answer it. */
export const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'The body is not valid JSON',
  401: 'Token missing, malformed, expired or revoked',
  403: 'Authenticated but not allowed',
  404: 'Not found',
  413: 'Body over the size limit',
  422: 'Validation failed: every failing field at once',
  429: 'Too many attempts: wait for Retry-After seconds',
  503: 'The database cannot be reached: retry after Retry-After seconds',
}

const JSON_TYPE = 'application/json'

/** Options of our schemas that only our error messages read (src/http/validation.ts), not JSON Schema keywords. */
const MESSAGE_OPTIONS = new Set(['itemsName'])

/** A TypeBox schema as plain JSON Schema (TypeBox keeps its bookkeeping under symbols, which JSON drops). */
const plain = (s: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(s, (k, v) => (MESSAGE_OPTIONS.has(k) ? undefined : v)))

function parameters(where: 'path' | 'query', schema: TObject | undefined) {
  if (!schema) return []
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties).map(([name, s]) => {
    const { description, ...rest } = plain(s)
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema: rest,
      // a list parameter is repeated: ?tag=a&tag=b
      ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
    }
  })
}

/**
 * The OpenAPI 3.1 document of the API, generated from the same route
 * declarations the dispatchers use: paths, parameters, bodies, answers and
 * who may call each route cannot drift from what the service does.
 */
export function openapiDocument(routes: readonly Route[], info: { title: string; version: string; description: string }) {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const path = `${API_PREFIX}${r.path}`.replace(/:([A-Za-z]+)/g, '{$1}')
    const responses: Record<string, unknown> = {
      [r.ok.status]: {
        description: r.ok.description ?? 'Success',
        ...(r.ok.schema ? { content: { [JSON_TYPE]: { schema: plain(r.ok.schema) } } } : {}),
      },
    }
    for (const status of r.errors) {
      responses[status] = {
        description: ERROR_DESCRIPTIONS[status],
        content: { [JSON_TYPE]: { schema: { $ref: '#/components/schemas/Errors' } } },
      }
    }
    const params = [...parameters('path', r.params), ...parameters('query', r.query)]
    paths[path] ??= {}
    paths[path][r.method.toLowerCase()] = {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      operationId: operationId(r),
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: true, content: { [JSON_TYPE]: { schema: plain(r.body) } } } } : {}),
      responses,
      security: r.auth === 'required' ? [{ Token: [] }] : r.auth === 'optional' ? [{}, { Token: [] }] : [],
    }
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/', description: 'this server' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Errors: plain(ErrorBody) },
      securitySchemes: {
        Token: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The word `Token`, a space, then the JWT: `Token eyJhbGciOi...` (`Bearer` works too)',
        },
      },
    },
  }
}

/** `getApiArticlesBySlug`: the method, then the path's words. */
function operationId(r: Route): string {
  const words = r.path
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith(':') ? `By${cap(s.slice(1))}` : cap(s)))
  return `${r.method.toLowerCase()}Api${words.join('')}`
}
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
