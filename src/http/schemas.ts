import { Type } from '@sinclair/typebox'
import { t } from 'elysia'

/**
 * The error envelope, `{"errors": {"<key>": ["<message>"]}}`: RealWorld 2.0's
 * GenericErrorModel, the key naming the field or resource concerned.
 */
export const ErrorBody = t.Object(
  { errors: t.Object({}, { additionalProperties: t.Array(t.String()) }) },
  { description: 'Every error: `{"errors": {"<key>": ["<message>"]}}`' },
)

/** A string column that may be null in responses. */
export const NullableString = t.Union([t.String(), t.Null()])

/**
 * A list's page in the query, counted in `what` (`articles`): `limit` and `offset`, plain
 * decimal digits (`+5`, `1e1` or `1.5` are refused: see query.ts).
 */
export const paging = (what: string) => ({
  limit: t.Optional(Type.Integer({ minimum: 1, default: 20, description: `how many ${what}; above 100 counts as 100` })),
  offset: t.Optional(Type.Integer({ minimum: 0, default: 0, description: `how many matching ${what} to skip` })),
})
