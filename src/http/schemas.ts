import { t } from 'elysia'

/** The error envelope, for the OpenAPI document. */
export const ErrorBody = t.Object(
  { errors: t.Record(t.String(), t.Array(t.String())) },
  { description: 'Every error: `{"errors": {"<key>": ["<message>"]}}`' },
)

const e = (description: string) => ({ ...ErrorBody, description })

export const errors = {
  400: e('The body is not valid JSON'),
  401: e('Token missing, malformed, expired or revoked'),
  403: e('Authenticated but not allowed'),
  404: e('Not found'),
  413: e('Body over the size limit'),
  422: e('Validation failed: every failing field at once'),
} as const

/**
 * Spread into every route that takes a body. The app-wide parser (app.ts)
 * does the parsing; naming `json` here too only tells the OpenAPI generator
 * the body is application/json (it ignores function parsers).
 */
export const jsonBody = { parse: 'json' } as const

/** Security requirement of routes that need (or accept) a token. */
export const tokenAuth = [{ Token: [] }]

/** A string column that may be null in responses. */
export const NullableString = t.Union([t.String(), t.Null()])
