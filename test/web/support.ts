import { afterAll, afterEach, beforeAll, expect } from 'bun:test'
import { existsSync } from 'node:fs'
import { type Browser, type BrowserContext, chromium, type Page } from '@playwright/test'
import type { Server } from 'bun'
import { SESSION_COOKIE } from '../../src/web/session.ts'
import { type TestApp, testApp } from '../support/app.ts'
import { registerUser } from '../support/fixtures.ts'

export { favorite, follow } from '../support/conduit.ts'

/**
 * The web app in a real browser: Debian's Chromium (`CHROMIUM`, default
 * /usr/bin/chromium) driven by Playwright, nothing downloaded. One browser
 * per test file; each test serves a fresh app (a fresh database of the
 * backend under test) on 127.0.0.1 and opens contexts on it.
 */

// (the functions run in the page see the browser's globals; this project's TypeScript has no DOM types)
declare const document: any
declare const window: any
declare const getComputedStyle: any

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
/** Why the browser tests are skipped, if they are: no Chromium here (REQUIRE_CHROMIUM=1 makes that a failure). */
export const noChromium = !existsSync(CHROMIUM) && process.env.REQUIRE_CHROMIUM !== '1' && `chromium missing (${CHROMIUM}; set CHROMIUM)`

/** The file's browser: launched before its first test, closed after its last. */
export function browserForFile(): () => Browser {
  let browser: Browser | undefined
  beforeAll(async () => {
    if (noChromium) return
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  }, 30_000)
  afterAll(async () => {
    await browser?.close()
  })
  return () => browser!
}

/** An app served on 127.0.0.1 as the binary serves it (its request entry), for a browser. */
export interface Site {
  app: TestApp
  /** `http://127.0.0.1:port` */
  origin: string
  url(path: string): string
}

const servers = new Set<Server<unknown>>()
// a test's server goes with it, as its database does (test/support/preload.ts)
afterEach(async () => {
  for (const s of servers) await s.stop(true)
  servers.clear()
})

export async function serveSite(): Promise<Site> {
  const app = await testApp()
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request, s) => app.app.respond(request, s) })
  servers.add(server)
  const origin = `http://127.0.0.1:${server.port}`
  return { app, origin, url: (path) => `${origin}${path}` }
}

export interface User {
  username: string
  email: string
  password: string
  token: string
}

/** A user registered through the API, with the profile given (bio, image) saved through it too. */
export async function user(app: TestApp, username: string, profile: { bio?: string; image?: string } = {}): Promise<User> {
  const u = await registerUser(app, { username, password: `${username}-password` })
  if (profile.bio !== undefined || profile.image !== undefined) {
    const res = await app.request('PUT', '/api/user', { token: u.token, body: { user: profile } })
    expect(res.status).toBe(200)
  }
  return u
}

export async function comment(app: TestApp, token: string, slug: string, body: string): Promise<void> {
  const res = await app.request('POST', `/api/articles/${encodeURIComponent(slug)}/comments`, { token, body: { comment: { body } } })
  expect(res.status).toBe(201)
}

/** A browser context, signed in as `as` (its session cookie, as /login sets it) or signed out. */
export async function openContext(browser: Browser, site: Site, as?: User) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
  if (as) await context.addCookies([{ name: SESSION_COOKIE, value: as.token, url: site.origin, httpOnly: true, sameSite: 'Lax' }])
  return context
}

/** What a context's pages did that a page of this site must not, or that a test looks for. */
export interface Watch {
  /** requests to any host but the site's, aborted */
  foreign: string[]
  /** alert(), confirm(), prompt() */
  dialogs: string[]
  /** console errors (a CSP violation, a failed load, a script error) */
  consoleErrors: string[]
  /** uncaught script errors */
  pageErrors: string[]
}

/** Records (and aborts) every request to another host, every dialog and every console error of the context's pages. */
export async function watch(context: BrowserContext, site: Site): Promise<Watch> {
  const w: Watch = { foreign: [], dialogs: [], consoleErrors: [], pageErrors: [] }
  await context.route('**/*', (route) => {
    const url = route.request().url()
    if (new URL(url).origin === site.origin) return route.continue()
    w.foreign.push(url)
    return route.abort('blockedbyclient')
  })
  context.on('dialog', (d) => {
    w.dialogs.push(`${d.type()}: ${d.message()} (${d.page()?.url()})`)
    void d.dismiss().catch(() => {})
  })
  context.on('console', (m) => {
    if (m.type() === 'error') w.consoleErrors.push(`${m.text()} (${m.location().url || m.page()?.url()})`)
  })
  context.on('weberror', (e) => {
    w.pageErrors.push(`${e.error().message} (${e.page()?.url()})`)
  })
  return w
}

/** Opens `path` and waits until the page and its files are loaded; the document's answer. */
export async function visit(page: Page, site: Site, path: string, status = 200) {
  const res = await page.goto(site.url(path), { waitUntil: 'load' })
  expect({ path, status: res?.status() }).toEqual({ path, status })
  return res!
}

/** What a page's DOM holds that could run or load something: run in the page. */
export interface DomAudit {
  /** href / src / action... values whose URL is `javascript:`, `data:` or `vbscript:` */
  scriptUrls: string[]
  /** `on...` attributes */
  handlers: string[]
  /** elements no page of this site has (inline scripts, frames, inline SVG, <base>, <style>...) */
  strangers: string[]
}

export const auditDom = (page: Page): Promise<DomAudit> =>
  page.evaluate(() => {
    const URL_ATTRIBUTES = ['href', 'src', 'action', 'formaction', 'srcset', 'xlink:href', 'poster', 'data', 'background', 'cite']
    const out = { scriptUrls: [] as string[], handlers: [] as string[], strangers: [] as string[] }
    for (const el of document.querySelectorAll('*')) {
      for (const a of el.attributes) {
        const name = a.name.toLowerCase()
        if (name.startsWith('on')) out.handlers.push(`<${el.tagName.toLowerCase()} ${name}="${a.value}">`)
        if (!URL_ATTRIBUTES.includes(name)) continue
        // as the browser reads it: leading spaces and controls, and tabs and newlines anywhere, dropped
        for (const value of name === 'srcset' ? a.value.split(',').map((s: string) => s.trim().split(/\s+/)[0]) : [a.value]) {
          let protocol = ''
          try {
            protocol = new URL(value, document.baseURI).protocol
          } catch {}
          if (['javascript:', 'data:', 'vbscript:'].includes(protocol))
            out.scriptUrls.push(`<${el.tagName.toLowerCase()} ${name}="${a.value}">`)
        }
      }
    }
    for (const el of document.querySelectorAll(
      'script:not([src]), iframe, frame, object, embed, svg, math, base, style, meta[http-equiv], link:not([rel="stylesheet"]):not([rel="icon"])',
    ))
      out.strangers.push(el.outerHTML.slice(0, 120))
    return out
  })

/** The text of each element `selector` matches, as shown (textContent). */
export const texts = (page: Page, selector: string): Promise<string[]> =>
  page.locator(selector).evaluateAll((els) => els.map((e: any) => e.textContent as string))

/** The focused element: its tag, text or label, and whether a focus indicator is drawn (an outline or a box-shadow). */
export interface Focused {
  tag: string
  name: string
  visible: boolean
}

export const focused = (page: Page): Promise<Focused | null> =>
  page.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return null
    const s = getComputedStyle(el)
    const outline = s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) > 0
    const shadow = s.boxShadow !== 'none' && s.boxShadow !== ''
    const name = (el.getAttribute('aria-label') ?? el.getAttribute('name') ?? el.textContent ?? '').trim().replace(/\s+/g, ' ')
    return { tag: el.tagName.toLowerCase(), name, visible: outline || shadow }
  })

/** The session's user as app.js tells tools (`window.__conduit_debug__`). */
export const debugUser = (page: Page) => page.evaluate(() => window.__conduit_debug__.getCurrentUser())
