import { t } from 'elysia'
import { NullableString } from '../http/schemas.ts'

export const Username = t.String({
  minLength: 1,
  maxLength: 40,
  format: 'username',
  description: 'letters, digits, `_`, `-`, `.`; unique ignoring ASCII case',
})
export const Email = t.String({ minLength: 1, maxLength: 254, format: 'email-address' })
export const Password = t.String({ minLength: 8, maxLength: 256, writeOnly: true })
export const Bio = t.Union([t.String({ maxLength: 4000 }), t.Null()], { description: '`null` or "" clears it' })
export const Image = t.Union([t.String({ maxLength: 2048, format: 'http-url' }), t.Null()], {
  description: 'an http(s) URL; `null` or "" clears it',
})

export const RegisterBody = t.Object({
  user: t.Object({ username: Username, email: Email, password: Password }),
})
export const LoginBody = t.Object({
  user: t.Object({ email: t.String({ minLength: 1 }), password: t.String({ minLength: 1, writeOnly: true }) }),
})
export const UpdateUserBody = t.Object({
  user: t.Object({
    email: t.Optional(Email),
    username: t.Optional(Username),
    password: t.Optional(Password),
    bio: t.Optional(Bio),
    image: t.Optional(Image),
  }),
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
 * usernames trimmed, and "" clears bio / image like null does.
 * Passwords are never touched.
 */
export function normalizeUserBody(body: unknown): void {
  const u = (body as Loose | null)?.user
  if (!u || typeof u !== 'object') return
  if (typeof u.email === 'string') u.email = u.email.trim().toLowerCase()
  if (typeof u.username === 'string') u.username = u.username.trim()
  for (const k of ['bio', 'image'] as const) {
    if (typeof u[k] === 'string' && (u[k] as string).trim() === '') u[k] = null
  }
}
