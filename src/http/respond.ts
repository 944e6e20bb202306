import { JSON_CONTENT_TYPE } from '../errors.ts'

/**
 * A response from a JSON string the database already built (articles,
 * comments, tags), carrying the headers hooks have set (CORS, security).
 */
export function rawJson(json: string | Uint8Array, set: { headers: unknown; status?: unknown }, status = 200): Response {
  const headers = set.headers as Record<string, string>
  headers['content-type'] = JSON_CONTENT_TYPE
  return new Response(json, { status, headers })
}

/** 204 with an empty body. */
export function noContent(set: { headers: unknown; status?: unknown }): Response {
  set.status = 204
  return new Response(null, { status: 204, headers: set.headers as Record<string, string> })
}
