import { replacesSession, type Tokens } from '../http/auth.ts'
import type { PasswordHasher } from '../auth/password.ts'
import { type LoginGuard, REGISTRATION_REFUSED, type RegistrationGuard } from './throttle.ts'
import { HttpError, unauthorized } from '../errors.ts'
import { type Route, reply, route } from '../http/route.ts'
import { LoginBody, normalizeUpdateBody, normalizeUserBody, RegisterBody, UpdateUserBody, UserResponse } from './schemas.ts'
import type { UserReadSql, UserRow } from './store.ts'
import type { UserWrites } from './writes.ts'
import { usernameKey } from '../names.ts'

interface Deps {
  sql: UserReadSql
  writes: UserWrites
  tokens: Tokens
  passwords: PasswordHasher
  loginGuard: LoginGuard
  registrationGuard: RegistrationGuard
  /** the client's address: the socket's peer, or the proxy's word for it (TRUST_PROXY) */
  clientAddress(request: Request): string
}

const invalidLogin = () => new HttpError(401, { credentials: ['invalid'] })
/** Only ever after the right password: whether an account is locked is not told to whoever does not have it. */
const lockedAccount = () => new HttpError(403, { account: ['is locked'] })

/** Users and authentication: POST /users, POST /users/login, GET and PUT /user. */
export function userRoutes({ sql, writes, tokens, passwords, loginGuard, registrationGuard, clientAddress }: Deps): Route[] {
  const tag = 'User and Authentication'
  const present = (u: UserRow) => ({
    user: { email: u.email, token: tokens.issue(u), username: u.username, bio: u.bio, image: u.image },
  })

  return [
    route({
      method: 'POST',
      path: '/users',
      operationId: 'CreateUser',
      auth: 'none',
      body: RegisterBody,
      normalize: normalizeUserBody,
      ok: { status: 201, schema: UserResponse },
      errors: [400, 409, 413, 415, 422, 429],
      errorExamples: { 429: { registration: [REGISTRATION_REFUSED] } },
      summary: 'Register',
      description: 'Registrations are throttled per client address (429 with Retry-After).',
      tag,
      handle: async ({ body, request }) => {
        const { username, email, password } = body.user
        await registrationGuard.attempt(clientAddress(request))
        const passwordHash = await passwords.hash(password)
        const user = await writes.create({ username, usernameKey: usernameKey(username), email, passwordHash })
        return reply(present(user), 201)
      },
    }),
    route({
      method: 'POST',
      path: '/users/login',
      operationId: 'Login',
      auth: 'none',
      body: LoginBody,
      normalize: normalizeUserBody,
      ok: { status: 200, schema: UserResponse },
      errors: [400, 401, 403, 413, 415, 422, 429],
      summary: 'Log in',
      description:
        'A wrong email or password answers 401. Repeated failures are throttled (429). The right password of an account an operator locked answers 403.',
      tag,
      handle: async ({ body, request }) => {
        const { email, password } = body.user
        const address = clientAddress(request)
        await loginGuard.attempt(email, address)
        const found = await sql.credentialsByEmail(email)
        const ok = found ? await passwords.verify(password, found.password_hash) : await passwords.burn(password)
        if (!found || !ok) throw invalidLogin()
        // the password was right: not a failure to count against the throttle's budget
        await loginGuard.succeeded(email, address)
        if (found.locked) throw lockedAccount()
        return reply(present(found))
      },
    }),
    route({
      method: 'GET',
      path: '/user',
      operationId: 'GetCurrentUser',
      auth: 'required',
      ok: { status: 200, schema: UserResponse },
      errors: [401],
      summary: 'Current user',
      tag,
      handle: async ({ viewer }) => {
        const user = await sql.byId(viewer.id)
        // deleted since its token was checked: the token is refused, as it is a moment later
        if (!user) throw unauthorized('is invalid')
        return reply(present(user))
      },
    }),
    route({
      method: 'PUT',
      path: '/user',
      operationId: 'UpdateCurrentUser',
      auth: 'required',
      body: UpdateUserBody,
      normalize: normalizeUpdateBody,
      ok: { status: 200, schema: UserResponse },
      errors: [400, 401, 409, 413, 415, 422, 429],
      errorExamples: { 429: { email: [REGISTRATION_REFUSED] } },
      summary: 'Update current user',
      description:
        'Changing the password signs out every other session: tokens issued before are refused, except the one that sent the change. The answer carries a fresh token. Changing the email counts against the registration throttle of the client address (429 with Retry-After).',
      tag,
      handle: async ({ body, viewer, request }) => {
        const { password, ...rest } = body.user
        const passwordHash = password === undefined ? undefined : await passwords.hash(password)
        const key = rest.username === undefined ? undefined : usernameKey(rest.username)
        // a new password bumps token_version: only the token that sent it and the fresh one below still work;
        // a web session's cookie takes the fresh one, so there its old token ends too
        const keptToken = passwordHash === undefined ? undefined : replacesSession(request) ? null : (viewer.tokenId ?? null)
        // an email change tells, as a registration does, whether the email is taken (409): each
        // spends the address's budget, checked before the write, so past it a free email and a
        // taken one get the same 429 (clients that send the whole form send their own email: free)
        if (rest.email !== undefined && (await sql.byId(viewer.id))?.email !== rest.email)
          await registrationGuard.attempt(clientAddress(request), 'email')
        const user = await writes.update(viewer.id, { ...rest, usernameKey: key, passwordHash, keptToken }, viewer)
        if (!user) throw unauthorized('is invalid')
        return reply(present(user))
      },
    }),
  ]
}
