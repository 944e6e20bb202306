/**
 * The error model of the API contract: every error is
 * `{"errors": {"<key>": ["<message>"]}}` with one of a few statuses.
 * Handlers throw HttpError; src/http/error-envelope.ts turns it (and every
 * other error) into that envelope, so nothing else ever reaches a client.
 */

export type ErrorMap = Record<string, string[]>

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ErrorMap,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${JSON.stringify(errors)}`)
  }
}

export const notFound = (what: string) => new HttpError(404, { [what]: ['not found'] })
export const forbidden = (what: string) => new HttpError(403, { [what]: ['forbidden'] })
export const unauthorized = (message: 'is missing' | 'is invalid') => new HttpError(401, { token: [message] })
export const unprocessable = (errors: ErrorMap) => new HttpError(422, errors)
/** A unique value another row holds (RealWorld 2.0: 409). */
export const conflict = (errors: ErrorMap) => new HttpError(409, errors)

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
