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
/** What an answer says of a token sent and not taken: RFC 6750's error code, this API's scheme. */
export const INVALID_TOKEN = 'Token error="invalid_token"'
/** A 401 says which credentials it wants (RFC 9110), and of a token sent, that it was not taken. */
export const unauthorized = (message: 'is missing' | 'is invalid') =>
  new HttpError(401, { token: [message] }, { 'www-authenticate': message === 'is missing' ? 'Token' : INVALID_TOKEN })
export const unprocessable = (errors: ErrorMap) => new HttpError(422, errors)
/** A unique value another row holds (RealWorld 2.0: 409). */
export const conflict = (errors: ErrorMap) => new HttpError(409, errors)

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
