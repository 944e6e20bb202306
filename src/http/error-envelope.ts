import { ValidationError } from 'elysia'
import { DatabaseUnavailable } from '../db/types.ts'
import { errorResponse, HttpError, UNAVAILABLE } from '../errors.ts'
import type { Logger } from '../log.ts'
import { pathOf } from './url.ts'
import { validationErrors } from './validation.ts'

const PARAM_RESOURCES: Record<string, string> = { slug: 'article', username: 'profile', id: 'comment' }
function paramResource(errors: { path: string }[]): string {
  const param = errors[0]?.path.split('/').filter(Boolean)[0] ?? ''
  return PARAM_RESOURCES[param] ?? 'route'
}

/**
 * Every error, ours or the framework's, as the contract's envelope
 * (`{"errors": {"<key>": ["<message>"]}}`): a 500 is logged with its cause
 * and says nothing more; the database being down is a 503 with Retry-After.
 */
export function errorEnvelope(logger: Logger) {
  return ({ code, error, set, request }: { code: unknown; error: unknown; set: { headers: unknown }; request: Request }): Response => {
    const extra = set.headers as Record<string, string>
    // errors thrown while parsing (413) arrive wrapped in Elysia's ParseError
    const cause = code === 'PARSE' ? (error as { cause?: unknown }).cause : undefined
    const http = error instanceof HttpError ? error : cause instanceof HttpError ? cause : undefined
    if (http) return errorResponse(http.status, http.errors, { ...extra, ...http.headers })
    if (error instanceof ValidationError) {
      // a path segment that does not decode (`%zz`) names nothing that exists
      if (error.type === 'params') return errorResponse(404, { [paramResource(error.all)]: ['not found'] }, extra)
      return errorResponse(422, validationErrors(error.all, error.type === 'body'), extra)
    }
    if (code === 'NOT_FOUND') return errorResponse(404, { route: ['not found'] }, extra)
    if (code === 'PARSE') return errorResponse(400, { body: ['is not valid JSON'] }, extra)
    if (error instanceof DatabaseUnavailable) {
      logger.warn('database unavailable', { method: request.method, path: pathOf(request.url) })
      return errorResponse(503, UNAVAILABLE.errors, { ...extra, ...UNAVAILABLE.headers })
    }
    logger.error('unhandled error', { method: request.method, path: pathOf(request.url) }, error)
    return errorResponse(500, { server: ['internal error'] }, extra)
  }
}
