import { expect } from 'bun:test'
import type { TestApp } from './app.ts'

let counter = 0
/** A name no other fixture in this process has used. */
export const unique = (prefix = 'user') => `${prefix}${++counter}${Math.random().toString(36).slice(2, 7)}`

export interface RegisteredUser {
  username: string
  email: string
  password: string
  token: string
}

/** Registers a user through the API and returns its credentials and token. */
export async function registerUser(app: TestApp, overrides: Partial<Omit<RegisteredUser, 'token'>> = {}): Promise<RegisteredUser> {
  const username = overrides.username ?? unique()
  const user = { username, email: overrides.email ?? `${username}@example.com`, password: overrides.password ?? 'password123' }
  const res = await app.request('POST', '/api/users', { body: { user } })
  expect(res.status).toBe(201)
  return { ...user, token: res.body.user.token }
}

export interface ArticleInput {
  title?: string
  description?: string
  body?: string
  tagList?: string[] | null
}

/** Creates an article through the API; returns the response's article. */
export async function createArticle(app: TestApp, token: string, input: ArticleInput = {}) {
  const article = {
    title: input.title ?? unique('Title '),
    description: input.description ?? 'A description',
    body: input.body ?? 'The body',
    ...(input.tagList !== undefined ? { tagList: input.tagList } : {}),
  }
  const res = await app.request('POST', '/api/articles', { token, body: { article } })
  expect(res.status).toBe(201)
  return res.body.article as {
    slug: string
    title: string
    description: string
    body: string
    tagList: string[]
    createdAt: string
    updatedAt: string
    favorited: boolean
    favoritesCount: number
    author: { username: string; bio: string | null; image: string | null; following: boolean }
  }
}

/**
 * A token the service must not take: `401` "is invalid" where a route needs one (GET /api/user);
 * where anyone may read (each of `reads`), exactly the answer anyone gets, saying in
 * `WWW-Authenticate` that the token is unusable.
 */
export async function expectTokenRefused(app: TestApp, authorization: string, reads: readonly string[] = ['/api/articles']) {
  const res = await app.request('GET', '/api/user', { headers: { authorization } })
  expect({ status: res.status, body: res.body, challenge: res.headers.get('www-authenticate') }).toEqual({
    status: 401,
    body: { errors: { token: ['is invalid'] } },
    challenge: 'Token error="invalid_token"',
  })
  for (const path of reads) {
    const anyone = await app.request('GET', path)
    // said only of a token that was sent and not taken
    expect({ path, anyone: anyone.headers.get('www-authenticate') }).toEqual({ path, anyone: null })
    const read = await app.request('GET', path, { headers: { authorization } })
    expect({ path, status: read.status, body: read.body, challenge: read.headers.get('www-authenticate') }).toEqual({
      path,
      status: anyone.status,
      body: anyone.body,
      challenge: 'Token error="invalid_token"',
    })
  }
}
