import type { Server } from 'bun'
import { markReplacingSession } from '../http/auth.ts'
import { API_PREFIX } from '../http/url.ts'

/** An answer of the API, as the web app reads it. */
export interface ApiAnswer {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read field by field where used
  body: any
}

/** What the web app's forms send the API: the same request a client would, answered by the same routes. */
export type Api = (
  request: Request,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  /** `replacesSession`: the session's cookie takes the answer's token (see markReplacingSession) */
  o?: { token?: string; body?: unknown; replacesSession?: boolean },
) => Promise<ApiAnswer>

/**
 * The web app's way to the API for everything a form changes: a request to
 * this app's own `/api` routes (`respond`, the request entry), so a form is
 * validated, throttled and written exactly as the same request from any
 * client would be, and its errors are the API's. The browser's address is
 * passed on for the throttles.
 */
export function apiClient(
  respond: (request: Request, server?: Server<unknown> | null) => Response | Promise<Response>,
  peer: (request: Request) => string | undefined,
): Api {
  return async (request, method, path, o = {}) => {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (o.token) headers.authorization = `Token ${o.token}`
    if (o.body !== undefined) headers['content-type'] = 'application/json'
    const forwarded = request.headers.get('x-forwarded-for')
    if (forwarded) headers['x-forwarded-for'] = forwarded
    const address = peer(request)
    const inner = new Request(`http://localhost${API_PREFIX}${path}`, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    })
    if (o.replacesSession) markReplacingSession(inner)
    const server = address ? ({ requestIP: () => ({ address, family: '', port: 0 }) } as unknown as Server<unknown>) : null
    const res = await respond(inner, server)
    const text = await res.text()
    let body: unknown
    try {
      body = text ? JSON.parse(text) : undefined
    } catch {
      body = undefined
    }
    return { status: res.status, body }
  }
}

/**
 * The API's error keys a form names otherwise: how a line says a message, and the form fields it
 * marks invalid (`credentials`: the sign-in form's two; `tagList`: the field labelled Tags, whose
 * limits are one tag's length and the article's number of tags). Any other key is its field's
 * own name.
 */
const FORM_NAMES = new Map<string, { say: (message: string) => string; fields: string[] }>(
  Object.entries({
    credentials: { say: (m: string) => `email or password is ${m}`, fields: ['email', 'password'] },
    tagList: { say: (m: string) => (m.startsWith('has ') ? `the article ${m.replace('items', 'tags')}` : `a tag ${m}`), fields: ['tags'] },
  }),
)

/** The API's error envelope as lines a person reads: `email can't be blank`. */
export function errorLines(answer: ApiAnswer): string[] {
  const errors = answer.body?.errors as Record<string, string[]> | undefined
  if (!errors) return [`something went wrong (${answer.status}); try again`]
  return Object.entries(errors).flatMap(([key, messages]) => messages.map((m) => FORM_NAMES.get(key)?.say(m) ?? `${key} ${m}`))
}

/** The form fields an answer's errors name, to be marked invalid. */
export function invalidFields(answer: ApiAnswer): ReadonlySet<string> {
  const keys = Object.keys((answer.body?.errors as Record<string, unknown> | undefined) ?? {})
  return new Set(keys.flatMap((k) => FORM_NAMES.get(k)?.fields ?? [k]))
}
