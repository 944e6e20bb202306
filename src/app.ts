import type { Database } from 'bun:sqlite'
import { Elysia, ValidationError } from 'elysia'
import { passwordHasher } from './auth/password.ts'
import { tokens as createTokens } from './auth/plugin.ts'
import { signingSecret } from './auth/secret.ts'
import type { Config } from './config.ts'
import { errorResponse, HttpError, JSON_CONTENT_TYPE } from './errors.ts'
import { cors } from './http/cors.ts'
import { validationErrors } from './http/validation.ts'
import { articleQueries } from './articles/queries.ts'
import { listQueries } from './articles/list.ts'
import { articleRoutes } from './articles/routes.ts'
import { commentQueries } from './comments/queries.ts'
import { commentRoutes } from './comments/routes.ts'
import { profileQueries } from './profiles/queries.ts'
import { profileRoutes } from './profiles/routes.ts'
import { tagQueries } from './tags/queries.ts'
import { tagRoutes } from './tags/routes.ts'
import { userQueries } from './users/queries.ts'
import { type LoginGuard, userRoutes } from './users/routes.ts'

export interface AppOptions {
  db: Database
  config: Config
  /** Where unexpected errors are reported (a 500's cause never goes to the client). */
  logError?: (message: string, error: unknown) => void
}

const noGuard: LoginGuard = { check() {}, failed() {}, succeeded() {} }

/**
 * Builds the whole service on a migrated database. No listening, no timers, no
 * global state: every test builds its own app on its own database.
 */
export function createApp({ db, config, logError = (m, e) => console.error(m, e) }: AppOptions) {
  const users = userQueries(db)
  const tokens = createTokens(signingSecret(db, config.jwtSecret), config.tokenTtlSeconds, users)
  const passwords = passwordHasher(config.passwordHash)
  const corsPolicy = cors(config.corsOrigins)
  const clientAddress = (_request: Request) => 'unknown'

  const api = new Elysia({ prefix: '/api' })
    .use(userRoutes({ users, tokens, passwords, loginGuard: noGuard, clientAddress }))
    .use(profileRoutes({ profiles: profileQueries(db), tokens }))
    .use(articleRoutes({ articles: articleQueries(db), lists: listQueries(db), tokens }))
    .use(commentRoutes({ comments: commentQueries(db), tokens }))
    .use(tagRoutes({ tags: tagQueries(db) }))

  return new Elysia()
    .onRequest(({ request, set }) => {
      Object.assign(set.headers, corsPolicy.headers(request))
      if (request.method === 'OPTIONS') return corsPolicy.preflight(request)
      const length = Number(request.headers.get('content-length') ?? 0)
      if (length > config.bodyLimitBytes) throw tooLarge(config.bodyLimitBytes)
    })
    .onParse(async ({ request }) => parseJsonBody(request, config.bodyLimitBytes))
    .onError({ as: 'global' }, ({ code, error, set, request }) => {
      const extra = set.headers as Record<string, string>
      if (error instanceof HttpError) return errorResponse(error.status, error.errors, { ...extra, ...error.headers })
      if (error instanceof ValidationError) {
        return errorResponse(422, validationErrors(error.all, error.type === 'body'), extra)
      }
      if (code === 'NOT_FOUND') return errorResponse(404, { route: ['not found'] }, extra)
      if (code === 'PARSE') return errorResponse(400, { body: ['is not valid JSON'] }, extra)
      logError(`unhandled error on ${request.method} ${new URL(request.url).pathname}`, error)
      return errorResponse(500, { server: ['internal error'] }, extra)
    })
    .mapResponse(({ responseValue, set }) => {
      if (responseValue instanceof Response) return
      if (set.status === 204) return new Response(null, { status: 204, headers: set.headers as Record<string, string> })
      set.headers['content-type'] = JSON_CONTENT_TYPE
      return new Response(JSON.stringify(responseValue), { status: set.status as number, headers: set.headers as Record<string, string> })
    })
    .use(api)
}

const tooLarge = (limit: number) => new HttpError(413, { body: [`is too large (maximum is ${limit} bytes)`] })

/**
 * Every body is read as JSON, whatever its Content-Type (curl -d sends a form
 * type). An empty body is `null`: bodiless routes accept it, the others
 * answer 422 for the missing wrapper. Bodies without Content-Length (chunked)
 * are measured as they are read.
 */
async function parseJsonBody(request: Request, limit: number): Promise<unknown> {
  const bytes = new Uint8Array(await request.arrayBuffer())
  if (bytes.byteLength > limit) throw tooLarge(limit)
  const text = new TextDecoder().decode(bytes)
  if (text.trim() === '') return null
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, { body: ['is not valid JSON'] })
  }
}

export type App = ReturnType<typeof createApp>
