import { expect } from 'bun:test'
import { type TestApp, type TestResponse, testApp } from './app.ts'
import { type RegisteredUser, registerUser } from './fixtures.ts'

/**
 * Helpers shared by the article, listing, favorite, comment and tag suites.
 *
 * Those suites register many users and test nothing about password hashing,
 * so their app hashes with the cheapest argon2id cost: a registration takes a
 * few milliseconds instead of ~40.
 */
export const conduitApp = (): Promise<TestApp> => testApp({ passwordHash: { memoryCost: 256, timeCost: 1 } })

/** ISO 8601, UTC, with milliseconds. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export const JSON_TYPE = 'application/json; charset=utf-8'

/** `n` users registered at once. */
export const registerUsers = (app: TestApp, n: number): Promise<RegisteredUser[]> =>
  Promise.all(Array.from({ length: n }, () => registerUser(app)))

export async function follow(app: TestApp, token: string, username: string): Promise<void> {
  const res = await app.request('POST', `/api/profiles/${encodeURIComponent(username)}/follow`, { token })
  expect(res.status).toBe(200)
}

export async function favorite(app: TestApp, token: string, slug: string): Promise<void> {
  const res = await app.request('POST', `/api/articles/${encodeURIComponent(slug)}/favorite`, { token })
  expect(res.status).toBe(200)
}

export interface Comment {
  id: number
  createdAt: string
  updatedAt: string
  body: string
  author: { username: string; bio: string | null; image: string | null; following: boolean }
}

export async function addComment(app: TestApp, token: string, slug: string, body = 'A comment'): Promise<Comment> {
  const res = await app.request('POST', `/api/articles/${encodeURIComponent(slug)}/comments`, { token, body: { comment: { body } } })
  expect(res.status).toBe(201)
  return res.body.comment
}

/** GET /api/articles (or the feed) with query parameters, repeated keys allowed. */
export function listArticles(
  app: TestApp,
  params: [string, string | number][] = [],
  { token, feed = false }: { token?: string; feed?: boolean } = {},
): Promise<TestResponse> {
  const query = new URLSearchParams(params.map(([k, v]): [string, string] => [k, String(v)])).toString()
  const path = feed ? '/api/articles/feed' : '/api/articles'
  return app.request('GET', query ? `${path}?${query}` : path, token ? { token } : {})
}

/** The slugs of a list response, in order. */
export const slugsOf = (res: TestResponse): string[] => res.body.articles.map((a: { slug: string }) => a.slug)
