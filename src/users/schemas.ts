import { t } from 'elysia'
import { NullableString } from '../http/schemas.ts'
import { unprocessable } from '../errors.ts'
import { requireObjectWrapper, text } from '../http/validation.ts'
import { usernameProblem } from './username.ts'
import { normalizeUsername } from '../names.ts'

export const Username = text('username', 1, 40, {
  problem: usernameProblem,
  description:
    '1-40 letters, digits, `_`, `-`, `.` (stored in Unicode NFKC; no invisible characters, no mixing of scripts); unique ignoring ASCII case',
})
export const Email = text('email', 1, 254, {
  // no control characters: an email is printed by tools that read the database (a terminal's escapes)
  valid: (v) => /^[^\s@\p{Cc}]+@[^\s@.\p{Cc}]+(\.[^\s@.\p{Cc}]+)+$/u.test(v),
  description: 'stored lower-cased; unique',
})
export const Password = { ...text('password', 8, 256, { allowNul: true }), writeOnly: true }
export const Bio = t.Union([text('bio', 0, 4000), t.Null()], { description: 'at most 4,000 characters; `null` or "" clears it' })
// Any text, as RealWorld 2.0 has it (its e2e suite stores `javascript:` ones): pages show only http(s) images.
export const Image = t.Union([text('image', 0, 2048), t.Null()], {
  description: 'the picture, a URL as the client gives it; at most 2,048 characters; `null` or "" clears it',
})

export const RegisterBody = t.Object({
  user: t.Object({ username: Username, email: Email, password: Password }),
})
export const LoginBody = t.Object({
  user: t.Object({ email: Email, password: t.String({ minLength: 1, maxLength: 1024, writeOnly: true }) }),
})
const UPDATABLE = ['email', 'username', 'password', 'bio', 'image'] as const
export const UpdateUserBody = t.Object({
  user: t.Object(
    {
      email: t.Optional(Email),
      username: t.Optional(Username),
      password: t.Optional(Password),
      bio: t.Optional(Bio),
      image: t.Optional(Image),
    },
    { minProperties: 1, description: 'at least one of the fields (RealWorld 2.0)' },
  ),
})

export const User = t.Object({
  email: t.String(),
  token: t.String(),
  username: t.String(),
  bio: NullableString,
  image: NullableString,
})
export const UserResponse = t.Object({ user: User })

type Loose = { user?: Record<string, unknown> }

/**
 * Runs before validation: emails are compared lower-cased and trimmed,
 * usernames trimmed and put in Unicode NFKC, and "" clears bio / image like
 * null does.
 * Passwords are never touched.
 */
export function normalizeUserBody(body: unknown): void {
  requireObjectWrapper(body, 'user')
  const u = (body as Loose | null)?.user
  if (!u || typeof u !== 'object') return
  if (typeof u.email === 'string') u.email = u.email.trim().toLowerCase()
  if (typeof u.username === 'string') u.username = normalizeUsername(u.username.trim())
  for (const k of ['bio', 'image'] as const) {
    if (typeof u[k] === 'string' && (u[k] as string).trim() === '') u[k] = null
  }
}

/**
 * An update names at least one field it knows (RealWorld 2.0); then as normalizeUserBody. A settings
 * form's empty password (`""`, `null`) beside other fields leaves the password as it is: several
 * RealWorld clients send it whenever the password is not changed. Alone it is refused (RealWorld 2.0).
 */
export function normalizeUpdateBody(body: unknown): void {
  normalizeUserBody(body)
  const u = (body as Loose | null)?.user
  if (!u || typeof u !== 'object') return
  if ((u.password === '' || u.password === null) && UPDATABLE.some((k) => k !== 'password' && k in u)) delete u.password
  if (!UPDATABLE.some((k) => k in u)) throw unprocessable({ user: ['must have at least one field'] })
}
