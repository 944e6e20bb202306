import { Elysia } from 'elysia'
import { authPlugin, type Tokens } from '../auth/plugin.ts'
import type { PasswordHasher } from '../auth/password.ts'
import type { LoginGuard, RegistrationGuard } from '../auth/throttle.ts'
import { HttpError, notFound } from '../errors.ts'
import { errors, jsonBody, tokenAuth } from '../http/schemas.ts'
import type { UserRow, UserStore } from './store.ts'
import { LoginBody, normalizeUserBody, RegisterBody, UpdateUserBody, UserResponse } from './schemas.ts'
import { usernameKey } from './username.ts'

interface Deps {
  users: UserStore
  tokens: Tokens
  passwords: PasswordHasher
  loginGuard: LoginGuard
  registrationGuard: RegistrationGuard
  /** the client's address: the socket's peer, or the proxy's word for it (TRUST_PROXY) */
  clientAddress(request: Request): string
}

const invalidLogin = () => new HttpError(401, { 'email or password': ['is invalid'] })

/** Users and authentication: POST /users, POST /users/login, GET and PUT /user. */
export function userRoutes({ users, tokens, passwords, loginGuard, registrationGuard, clientAddress }: Deps) {
  const present = (u: UserRow) => ({
    user: { email: u.email, token: tokens.issue(u), username: u.username, bio: u.bio, image: u.image },
  })

  return new Elysia()
    .use(authPlugin(tokens))
    .post(
      '/users',
      async ({ body, set, request }) => {
        const { username, email, password } = body.user
        await registrationGuard.attempt(clientAddress(request))
        const passwordHash = await passwords.hash(password)
        const user = await users.create({ username, usernameKey: usernameKey(username), email, passwordHash })
        set.status = 201
        return present(user)
      },
      {
        transform: ({ body }) => normalizeUserBody(body),
        ...jsonBody,
        body: RegisterBody,
        response: { 201: UserResponse, 400: errors[400], 422: errors[422] },
        detail: {
          summary: 'Register',
          description: 'Registrations are throttled per client address (429 with Retry-After).',
          tags: ['User and Authentication'],
        },
      },
    )
    .post(
      '/users/login',
      async ({ body, request }) => {
        const { email, password } = body.user
        const address = clientAddress(request)
        await loginGuard.attempt(email, address)
        const found = await users.credentialsByEmail(email)
        const ok = found ? await passwords.verify(password, found.password_hash) : await passwords.burn(password)
        if (!found || !ok) throw invalidLogin()
        await loginGuard.succeeded(email, address)
        return present(found)
      },
      {
        transform: ({ body }) => normalizeUserBody(body),
        ...jsonBody,
        body: LoginBody,
        response: { 200: UserResponse, 400: errors[400], 401: errors[401], 422: errors[422] },
        detail: {
          summary: 'Log in',
          description: 'A wrong email or password answers 401. Repeated failures are throttled (429).',
          tags: ['User and Authentication'],
        },
      },
    )
    .get(
      '/user',
      async ({ viewer }) => {
        const user = await users.byId(viewer.id)
        if (!user) throw notFound('user')
        return present(user)
      },
      {
        auth: true,
        response: { 200: UserResponse, 401: errors[401] },
        detail: { summary: 'Current user', tags: ['User and Authentication'], security: tokenAuth },
      },
    )
    .put(
      '/user',
      async ({ body, viewer }) => {
        const { password, ...rest } = body.user
        const passwordHash = password === undefined ? undefined : await passwords.hash(password)
        const key = rest.username === undefined ? undefined : usernameKey(rest.username)
        const user = await users.update(viewer.id, { ...rest, usernameKey: key, passwordHash })
        if (!user) throw notFound('user')
        // A password change bumped token_version: the fresh token below is the
        // only one that still works.
        return present(user)
      },
      {
        auth: true,
        transform: ({ body }) => normalizeUserBody(body),
        ...jsonBody,
        body: UpdateUserBody,
        response: { 200: UserResponse, 400: errors[400], 401: errors[401], 422: errors[422] },
        detail: {
          summary: 'Update current user',
          description: 'Changing the password revokes every earlier token; the response carries a fresh one.',
          tags: ['User and Authentication'],
          security: tokenAuth,
        },
      },
    )
}
