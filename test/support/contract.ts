import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { compile, routeMatcher } from '../../src/http/dispatch.ts'
import type { Route } from '../../src/http/route.ts'
import { ErrorBody } from '../../src/http/schemas.ts'
import { canonicalRequest, isApi, pathOf } from '../../src/http/url.ts'

/**
 * Every answer the suite receives from the API is checked against its route's
 * declaration (src/http/route.ts), the same one the OpenAPI document is made
 * from: a success against the declared answer schema (no body where none is
 * declared), an error against the error envelope, and its status among those
 * the route declares (a 500, which no route declares, only where a test asks
 * for one). The routes come from a built app (`app.declared`).
 */
const checks = new WeakMap<object, TypeCheck<any>>()
const checkOf = (schema: object) => {
  let c = checks.get(schema)
  if (!c) checks.set(schema, (c = TypeCompiler.Compile(schema as never)))
  return c
}
const errorCheck = TypeCompiler.Compile(ErrorBody)

/** Statuses any API route may answer besides its own: the database unavailable. */
const ANY_ROUTE = new Set([503])

export interface ContractOptions {
  /** the test provokes a fault on purpose: a 500 is expected */
  allow500?: boolean
}

const matchers = new WeakMap<readonly Route[], (method: string, path: string) => Route | undefined>()

/** The dispatcher's own matching, per method. */
function matcher(routes: readonly Route[]) {
  let m = matchers.get(routes)
  if (!m) {
    const byMethod = new Map<string, ReturnType<typeof routeMatcher>>()
    for (const method of ['GET', 'POST', 'PUT', 'DELETE'])
      byMethod.set(method, routeMatcher(compile(routes.filter((r) => r.method === method))))
    m = (method, path) => byMethod.get(method)?.(path)?.compiled.route
    matchers.set(routes, m)
  }
  return m
}

/** Throws, naming the route and what is wrong, when an answer breaks the contract; returns silently otherwise. */
export function checkAnswer(
  routes: readonly Route[],
  method: string,
  url: string,
  status: number,
  text: string,
  o: ContractOptions = {},
): void {
  // the URL as the service reads it (one slash for a run of them)
  url = canonicalRequest(new Request(url)).url
  // (the API's root is a page about it, declared by no route)
  if (!isApi(url)) return
  const path = pathOf(url)
  const m = method === 'HEAD' ? 'GET' : method
  const route = matcher(routes)(m, path)
  const where = `${method} ${path} answered ${status}`
  if (status === 500) {
    if (!o.allow500) throw new Error(`${where}: a 500 (a fault in the service)`)
    expectError(where, text)
    return
  }
  // no such route (or a parameter that does not decode): the router's 404
  if (!route) {
    if (status !== 404 && status !== 413 && status !== 400 && status !== 204 && status !== 503)
      throw new Error(`${where}: no route declares this`)
    if (status >= 400) expectError(where, text)
    return
  }
  if (status === route.ok.status) {
    if (method === 'HEAD') return
    if (route.ok.schema === null) {
      if (text !== '') throw new Error(`${where}: a body where none is declared`)
      return
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`${where}: not JSON: ${text.slice(0, 200)}`)
    }
    const c = checkOf(route.ok.schema)
    if (!c.Check(body)) {
      const e = c.Errors(body).First()
      throw new Error(
        `${where}: the body breaks the declared schema at ${e?.path}: ${e?.message} (${JSON.stringify(e?.value)?.slice(0, 100)})`,
      )
    }
    return
  }
  // a preflight is answered before any route
  if (method === 'OPTIONS') return
  if (!(route.errors as readonly number[]).includes(status) && !ANY_ROUTE.has(status)) {
    throw new Error(`${where}: not a status the route declares (${[route.ok.status, ...route.errors].join(', ')})`)
  }
  if (method !== 'HEAD') expectError(where, text)
}

function expectError(where: string, text: string) {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`${where}: an error that is not JSON: ${text.slice(0, 200)}`)
  }
  if (!errorCheck.Check(body)) throw new Error(`${where}: an error outside the envelope: ${text.slice(0, 200)}`)
}
