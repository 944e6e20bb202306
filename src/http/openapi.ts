import type { TObject, TSchema } from '@sinclair/typebox'
import { API_PREFIX } from './url.ts'
import type { ErrorStatus, Route } from './route.ts'
import { ErrorBody } from './schemas.ts'

/** What each error status means wherever a route may answer it, with an example body (as RealWorld 2.0's document gives). */
const ERROR_RESPONSES: Record<ErrorStatus, { description: string; example: Record<string, string[]> }> = {
  400: { description: 'The body is not valid JSON', example: { body: ['is not valid JSON'] } },
  401: { description: 'Token missing, malformed, expired or revoked', example: { token: ['is missing'] } },
  403: { description: 'Forbidden. The error key names the resource (article, comment)', example: { article: ['forbidden'] } },
  404: { description: 'Not Found. The error key names the resource (article, profile, comment)', example: { article: ['not found'] } },
  409: { description: 'Conflict: another user has this email or username', example: { username: ['has already been taken'] } },
  413: { description: 'Body over the size limit', example: { body: ['is too large (maximum is 1048576 bytes)'] } },
  415: {
    description: 'The body is compressed (Content-Encoding); send it unencoded',
    example: { body: ['is encoded (gzip); send it unencoded'] },
  },
  422: { description: 'Validation failed: every failing field at once', example: { title: ["can't be blank"] } },
  429: {
    description: 'Too many attempts: wait for Retry-After seconds',
    example: { login: ['too many failed attempts; try again later'] },
  },
  503: {
    description:
      'The database cannot be reached: retry after Retry-After seconds. Without Retry-After, a write whose COMMIT the database did not confirm: it may be stored, so read before sending it again',
    example: { database: ['is unavailable; try again shortly'] },
  },
}
/** The RealWorld version whose contract the document describes (docs/API.md). */
export const REALWORLD_VERSION = '2.0.0'

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
    // every route reads or writes the database: each may answer 503 while it cannot be reached
    for (const status of [...r.errors, 503 as const]) {
      const { description, example } = ERROR_RESPONSES[status]
      const errors = r.errorExamples?.[status] ?? example
      responses[status] = {
        description,
        content: { [JSON_TYPE]: { schema: { $ref: '#/components/schemas/GenericErrorModel' }, example: { errors } } },
      }
    }
    const params = [...parameters('path', r.params), ...parameters('query', r.query)]
    paths[path] ??= {}
    paths[path][r.method.toLowerCase()] = {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      operationId: r.operationId,
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: true, content: { [JSON_TYPE]: { schema: plain(r.body) } } } } : {}),
      responses,
      security: r.auth === 'required' ? [{ Token: [] }] : r.auth === 'optional' ? [{}, { Token: [] }] : [],
    }
  }
  return {
    openapi: '3.1.0',
    info: { ...info, 'x-realworld-version': REALWORLD_VERSION },
    servers: [{ url: '/', description: 'this server' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { GenericErrorModel: plain(ErrorBody) },
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
