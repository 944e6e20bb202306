import { conflict, type ErrorMap } from '../errors.ts'

/**
 * The 409 for a registration or profile change that hit a unique constraint,
 * naming every taken field (not only the first the database tripped on).
 */
export function explainTaken(t: { email_taken: unknown; username_taken: unknown }) {
  const errors: ErrorMap = {}
  if (t.email_taken) errors.email = ['has already been taken']
  if (t.username_taken) errors.username = ['has already been taken']
  // a concurrent change freed the value again: still a conflict, of the username
  return conflict(Object.keys(errors).length ? errors : { username: ['has already been taken'] })
}
