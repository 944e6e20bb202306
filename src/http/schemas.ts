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
