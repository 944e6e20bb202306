import type { Viewer } from '../auth/actor.ts'
import type { Built } from '../cache/cache.ts'
import { type Body, text } from '../cache/pieces.ts'
import { keys } from '../keys/keys.ts'
import type { Html } from './html.ts'
import type { Me } from './layout.ts'

/** What a page handler knows of its request. */
export interface Ctx {
  request: Request
  path: string
  params: Record<string, string>
  query: ReadQuery
  /** the signed-in user, or null */
  viewer: Viewer | null
  /** 0 when anonymous: what reads and caches key on */
  viewerId: number
  /** the session's token (the API's), for the forms' requests */
  token: string | undefined
  /** the navbar's user */
  me: Me | null
  /** a POST's fields */
  form: URLSearchParams
  /** what the page was built from: reads add their keys (see `use`); null once something uncacheable was read */
  deps: number[] | null
}

/**
 * A request's query that remembers which names the page read: a page is kept only when it read
 * every name its URL has, so URLs with made-up parameters (`/login?x=1`, `?x=2`, ...) cannot
 * each take a place in the cache for the same page.
 */
export class ReadQuery extends URLSearchParams {
  readonly read = new Set<string>()
  override get(name: string): string | null {
    this.read.add(name)
    return super.get(name)
  }
  override getAll(name: string): string[] {
    this.read.add(name)
    return super.getAll(name)
  }
  override has(name: string, value?: string): boolean {
    this.read.add(name)
    return super.has(name, value)
  }
  /** Whether the page read every name the query has. */
  allRead(): boolean {
    for (const name of this.keys()) if (!this.read.has(name)) return false
    return true
  }
}

/** What a page handler answers. */
export type Outcome =
  | { kind: 'page'; status: number; title: string; main: Html; here?: import('./layout.ts').Here }
  | { kind: 'redirect'; to: string; cookie?: string }

export const redirect = (to: string, cookie?: string): Outcome => ({ kind: 'redirect', to, cookie })

/**
 * A read's answer as data, its dependency keys added to the page's: the page
 * is kept, and dropped, exactly as the answers it shows.
 */
export function use<T = Record<string, unknown>>(ctx: Ctx, built: Built<Body>): T {
  if (ctx.deps) for (const k of built.deps) ctx.deps.push(k)
  return JSON.parse(text(built.value)) as T
}

/** The page shows something no key describes (a form's errors, the settings' email): it is not kept. */
export const uncacheable = (ctx: Ctx): void => {
  ctx.deps = null
}

/** The keys every page of a signed-in user depends on: their profile (the navbar). */
export const viewerDeps = (viewerId: number): number[] => (viewerId ? [keys.user(viewerId)] : [])
