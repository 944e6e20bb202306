import { describe, expect } from 'bun:test'
import { resolve } from 'node:path'
import type { BrowserContext, Page } from '@playwright/test'
import { DEFAULT_AVATAR } from '../../src/web/layout.ts'
import { SESSION_COOKIE } from '../../src/web/session.ts'
import { createArticle } from '../support/fixtures.ts'
import { skipIf, why } from '../support/skip.ts'
import {
  auditDom,
  browserForFile,
  comment,
  debugUser,
  type Focused,
  favorite,
  focused,
  follow,
  noChromium,
  openContext,
  type Site,
  serveSite,
  texts,
  type User,
  user,
  visit,
  type Watch,
  watch,
} from './support.ts'

/**
 * The web app as a person meets it: pages served by the real app on a real
 * database, opened in Chromium. What the server-side tests of the pages
 * cannot see is checked here: what the browser loads, what it runs, what a
 * screen reader and a keyboard user get.
 */

// (the functions run in the page see the browser's globals; this project's TypeScript has no DOM types)
declare const document: any
declare const window: any

const browser = browserForFile()
/** Each test takes seconds; a busy machine (two cores, other suites' browsers) may make that many times more. */
const TIMEOUT_MS = 120_000
const AXE = resolve(import.meta.dir, '../../node_modules/axe-core/axe.min.js')

/** A small site: two authors, an article each, a comment, a favorite, a follow, a tag. */
async function smallSite() {
  const site = await serveSite()
  const ada = await user(site.app, 'ada', { bio: 'Writes about databases.' })
  const bob = await user(site.app, 'bob')
  const mine = await createArticle(site.app, ada.token, {
    title: 'Hello there',
    description: 'A first article',
    // a link to another host is only a link: nothing is loaded from it
    body: '# Hello\n\nSome *text*, a [link](https://example.invalid/elsewhere), `code` and a list:\n\n- one\n- two\n',
    tagList: ['x', 'intro'],
  })
  const theirs = await createArticle(site.app, bob.token, { title: 'A reply', description: 'From bob', body: 'Hi ada.', tagList: ['x'] })
  await comment(site.app, bob.token, mine.slug, 'Nice one.')
  await comment(site.app, ada.token, mine.slug, 'Thanks!')
  await favorite(site.app, ada.token, theirs.slug)
  await follow(site.app, ada.token, 'bob')
  const shared = [
    ['/', 200],
    ['/tag/x', 200],
    [`/article/${mine.slug}`, 200],
    [`/article/${theirs.slug}`, 200],
    ['/profile/ada', 200],
    ['/profile/ada/favorites', 200],
    ['/profile/bob', 200],
    ['/no-such-page', 404],
  ] as const
  return {
    site,
    ada,
    bob,
    mine,
    theirs,
    /** every page, signed out (the editor and the settings send to the sign-in page) */
    signedOut: [...shared, ['/login', 200], ['/register', 200], ['/editor', 200], ['/settings', 200]] as [string, number][],
    /** every page, signed in as ada (the sign-in and sign-up pages send home) */
    signedIn: [
      ...shared,
      ['/?feed=following', 200],
      ['/editor', 200],
      [`/editor/${mine.slug}`, 200],
      [`/editor/${theirs.slug}`, 403],
      ['/settings', 200],
      ['/login', 200],
      ['/register', 200],
    ] as [string, number][],
  }
}

/** Visits each page in one tab of `context`, calling `check` on each. */
async function visitAll(
  context: BrowserContext,
  site: Site,
  pages: [string, number][],
  check: (page: Page, path: string) => Promise<void>,
) {
  const page = await context.newPage()
  for (const [path, status] of pages) {
    await visit(page, site, path, status)
    await check(page, path)
  }
  await page.close()
}

const CSP_ERROR = /Content Security Policy|Refused to/
const STATUS_TEXT: Record<number, string> = { 403: 'Forbidden', 404: 'Not Found' }
/** What Chromium's console says of an answer with an error status. */
const failedLoad = (url: string, status: number) =>
  `Failed to load resource: the server responded with a status of ${status} (${STATUS_TEXT[status]}) (${url})`

describe('the web app in Chromium', () => {
  /*
   * No page loads anything from another host: no font, script, style or
   * image of a CDN, no analytics. The one thing a page may load from
   * elsewhere is what a user chose: their avatar's http(s) URL (the CSP
   * allows images from any http(s) host for that). So this check runs on
   * data with no such avatar, where any request elsewhere is a fault, and
   * the next test checks the one exception on its own: a user's avatar is
   * shown as given, and is then the only request to another host (which
   * also shows that the recording below sees such requests).
   */
  skipIf(noChromium || why.sqlitePass).test(
    'loads nothing from another host: every page, signed in and signed out',
    async () => {
      const s = await smallSite()
      for (const as of [undefined, s.ada]) {
        const context = await openContext(browser(), s.site, as)
        const w = await watch(context, s.site)
        const refusedPages = (as ? s.signedIn : s.signedOut).filter(([, status]) => status !== 200)
        await visitAll(context, s.site, as ? s.signedIn : s.signedOut, async (page, path) => {
          // the page's own files did load: its style sheet and its script
          const loaded = await page.evaluate(() => ({
            rules: document.styleSheets[0]?.cssRules.length ?? 0,
            script: typeof window.__conduit_debug__ === 'object',
          }))
          expect({ path, loaded }).toEqual({ path, loaded: { rules: expect.any(Number), script: true } })
          expect(loaded.rules).toBeGreaterThan(10)
        })
        // (Chromium reports a page answered 403 or 404 as a resource that failed to load: those are the pages' own)
        const errors = w.consoleErrors.filter((e) => !refusedPages.some(([path, status]) => e === failedLoad(s.site.url(path), status)))
        expect({ ...w, consoleErrors: errors }).toEqual({ foreign: [], dialogs: [], consoleErrors: [], pageErrors: [] })
        await context.close()
      }
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium).test(
    'shows a user’s http(s) avatar as given: the only request a page makes to another host',
    async () => {
      const site = await serveSite()
      const image = 'https://example.invalid/a.png'
      const carol = await user(site.app, 'carol', { image })
      const a = await createArticle(site.app, carol.token, { title: 'Pictures', tagList: ['x'] })
      await comment(site.app, carol.token, a.slug, 'Mine.')
      const context = await openContext(browser(), site)
      const w = await watch(context, site)
      const page = await context.newPage()
      await visit(page, site, '/profile/carol')
      expect(await page.locator('.user-img').getAttribute('src')).toBe(image)
      await visit(page, site, `/article/${a.slug}`)
      expect(await page.locator('.article-meta img').first().getAttribute('src')).toBe(image)
      expect(await page.locator('.card:not(.comment-form) .comment-author-img').getAttribute('src')).toBe(image)
      await visit(page, site, '/')
      expect([...new Set(w.foreign)]).toEqual([image])
      expect({ dialogs: w.dialogs, pageErrors: w.pageErrors }).toEqual({ dialogs: [], pageErrors: [] })
      await context.close()
    },
    TIMEOUT_MS,
  )

  /*
   * Everything a user writes, with markup, script URLs and quotes that close
   * an attribute in every field that takes them: shown as the text it is,
   * never run, never a link or an image source that runs script. Usernames
   * allow only letters, digits, `_`, `.` and `-` (src/users/username.ts), so
   * their payloads are refused; the next test checks the forms that echo them.
   */
  skipIf(noChromium).test(
    'shows markup and script URLs in every field users write as text, and runs none of it',
    async () => {
      const site = await serveSite()
      const p = payloads
      const badImages = { mallory: 'javascript:alert("im")', trudy: 'data:text/html,<script>alert("im")</script>' }
      // an http(s) URL is shown as given: a quote in it must not end the attribute
      const eveImage = 'https://example.invalid/"><svg/onload=alert("im")>'
      const mallory = await user(site.app, 'mallory', { bio: p('bi').join('\n'), image: badImages.mallory })
      const trudy = await user(site.app, 'trudy', { bio: p('bi').join(' '), image: badImages.trudy })
      const eve = await user(site.app, 'eve', { bio: p('bi')[4]!, image: eveImage })
      const tags = p('tg')
      // (an article's tags come back sorted)
      const sortedTags = [...tags].sort()
      const article = { title: p('ti').join(' '), description: p('de').join(' '), body: MARKDOWN, tagList: tags }
      const a = await createArticle(site.app, mallory.token, article)
      await comment(site.app, trudy.token, a.slug, p('cm').join('\n'))
      await comment(site.app, eve.token, a.slug, p('cm')[0]!)
      await favorite(site.app, eve.token, a.slug)

      const everyone: (User | undefined)[] = [undefined, mallory, trudy]
      const seen: string[] = []
      const watches: Watch[] = []
      for (const as of everyone) {
        const context = await openContext(browser(), site, as)
        const w = await watch(context, site)
        watches.push(w)
        const page = await context.newPage()
        const check = async (path: string) => {
          await visit(page, site, path)
          const audit = await auditDom(page)
          expect({ as: as?.username, path, audit }).toEqual({
            as: as?.username,
            path,
            audit: { scriptUrls: [], handlers: [], strangers: [] },
          })
          seen.push(path)
        }

        await check('/')
        expect(await texts(page, '.preview-link h1')).toEqual([article.title])
        expect(await texts(page, '.preview-link p')).toEqual([article.description])
        expect(await texts(page, '.preview-link .tag-list li')).toEqual(sortedTags)
        expect(await texts(page, '.sidebar .tag-list a')).toEqual(expect.arrayContaining(tags))

        // (a tag's page is the home page's list: once is enough)
        for (const tag of as ? [] : tags) {
          await check(`/tag/${encodeURIComponent(tag)}`)
          expect(await texts(page, '.feed-toggle .nav-link.active')).toEqual([`#${tag}`])
          expect(await texts(page, '.preview-link h1')).toEqual([article.title])
        }

        await check(`/article/${encodeURIComponent(a.slug)}`)
        expect(await texts(page, '.article-page .banner h1')).toEqual([article.title])
        expect(await texts(page, '.article-content .tag-list li')).toEqual(sortedTags)
        expect(await texts(page, '.card:not(.comment-form) .card-text')).toEqual([p('cm').join('\n'), p('cm')[0]!])
        const content = (await texts(page, '.article-content'))[0]!
        for (const raw of RAW_HTML) expect({ shown: content.includes(raw), raw }).toEqual({ shown: true, raw })
        // the safe link is a link; the others are text
        expect(await page.locator('.article-content a').evaluateAll((links) => links.map((x: any) => x.getAttribute('href')))).toEqual([
          'https://example.invalid/ok',
        ])
        // javascript: and data: images show the default avatar
        const avatars = await page.locator('.comment-author-img').evaluateAll((imgs) => imgs.map((x: any) => x.getAttribute('src')))
        expect(avatars.filter((src) => src !== DEFAULT_AVATAR)).toEqual([eveImage])

        for (const [name, bio, image] of [
          ['mallory', p('bi').join('\n'), DEFAULT_AVATAR],
          ['trudy', p('bi').join(' '), DEFAULT_AVATAR],
          ['eve', p('bi')[4]!, eveImage],
        ] as const) {
          await check(`/profile/${name}`)
          expect(await texts(page, '.user-info p')).toEqual([bio])
          expect(await page.locator('.user-img').getAttribute('src')).toBe(image)
        }
        await check('/profile/eve/favorites')
        expect(await texts(page, '.preview-link h1')).toEqual([article.title])

        if (as) {
          await check('/settings')
          const me =
            as === mallory ? { bio: p('bi').join('\n'), image: badImages.mallory } : { bio: p('bi').join(' '), image: badImages.trudy }
          expect(await page.locator('input[name="image"]').inputValue()).toBe(me.image)
          expect(await page.locator('textarea[name="bio"]').inputValue()).toBe(me.bio)
          expect(await debugUser(page)).toMatchObject({ username: as.username, bio: me.bio, image: me.image })
        }
        if (as === mallory) {
          await check(`/editor/${encodeURIComponent(a.slug)}`)
          expect(await page.locator('input[name="title"]').inputValue()).toBe(article.title)
          expect(await page.locator('input[name="description"]').inputValue()).toBe(article.description)
          expect(await page.locator('textarea[name="body"]').inputValue()).toBe(article.body)
          expect(await page.locator('input[name="tag"]').evaluateAll((is) => is.map((i: any) => i.value))).toEqual(sortedTags)
        }
        await context.close()
      }
      // six pages each, the tags' pages once, the settings twice, the editor once
      expect(seen.length).toBe(3 * 6 + tags.length + 2 + 1)
      for (const w of watches) {
        expect({ dialogs: w.dialogs, pageErrors: w.pageErrors, csp: w.consoleErrors.filter((e) => CSP_ERROR.test(e)) }).toEqual({
          dialogs: [],
          pageErrors: [],
          csp: [],
        })
        // eve's avatar, and nothing else, was asked of another host
        expect([...new Set(w.foreign)]).toEqual([new URL(eveImage).href])
      }
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium).test(
    'gives back what was typed into a refused form as text: sign up, sign in, the editor',
    async () => {
      const site = await serveSite()
      const mallory = await user(site.app, 'mallory')
      const context = await openContext(browser(), site)
      const w = await watch(context, site)
      const page = await context.newPage()
      const p = payloads

      // a username with markup is refused (letters, digits, _ . - only), and shown back as typed, with the email
      const emails = p('em').map((e) => `${e}@example.com`)
      for (const [i, username] of p('un').entries()) {
        await visit(page, site, '/register')
        await page.fill('input[name="username"]', username)
        await page.fill('input[name="email"]', emails[i]!)
        await page.fill('input[name="password"]', 'a-long-password')
        await Promise.all([page.waitForURL('**/register'), page.click('button[type="submit"]')])
        expect(await page.locator('.error-messages li').allTextContents()).toContain('username is invalid')
        expect(await page.locator('input[name="username"]').inputValue()).toBe(username)
        expect(await page.locator('input[name="email"]').inputValue()).toBe(emails[i]!)
        expect(await auditDom(page)).toEqual({ scriptUrls: [], handlers: [], strangers: [] })
      }
      expect(await site.app.db.count('SELECT count(*) FROM users')).toBe(1)

      // (the sign-in form's field is the sign-up form's: the markup and the quote are enough)
      for (const email of [p('em')[0]!, p('em')[4]!]) {
        await visit(page, site, '/login?back=javascript:alert("back")')
        await page.fill('input[name="email"]', email)
        await page.fill('input[name="password"]', 'wrong-password')
        await Promise.all([page.waitForURL('**/login?**'), page.click('button[type="submit"]')])
        expect(await page.locator('.error-messages li').count()).toBeGreaterThan(0)
        expect(await page.locator('input[name="email"]').inputValue()).toBe(email)
        expect(await auditDom(page)).toEqual({ scriptUrls: [], handlers: [], strangers: [] })
      }
      // a `back` that is not a path of this site is ignored: home after signing in
      await page.fill('input[name="email"]', mallory.email)
      await page.fill('input[name="password"]', mallory.password)
      await Promise.all([page.waitForURL(site.url('/')), page.click('button[type="submit"]')])

      // the editor: an article without a title is refused, and the rest comes back, tags as pills
      await visit(page, site, '/editor')
      await page.fill('input[name="description"]', p('de').join(' '))
      await page.fill('textarea[name="body"]', MARKDOWN)
      for (const tag of p('tg')) {
        await page.fill('input[placeholder="Enter tags"]', tag)
        await page.press('input[placeholder="Enter tags"]', 'Enter')
      }
      // (a comma separates tags in "Enter tags": the data: one is two)
      const pills = p('tg').flatMap((t) => t.split(','))
      expect(await texts(page, '.editor-form .tag-pill')).toEqual(pills)
      await Promise.all([page.waitForURL('**/editor'), page.click('button:has-text("Publish Article")')])
      expect(await page.locator('.error-messages li').allTextContents()).toContain("title can't be blank")
      expect(await page.locator('input[name="description"]').inputValue()).toBe(p('de').join(' '))
      expect(await page.locator('textarea[name="body"]').inputValue()).toBe(MARKDOWN)
      expect(await texts(page, '.editor-form .tag-pill')).toEqual(pills)
      expect(await page.locator('input[name="tag"]').evaluateAll((is) => is.map((i: any) => i.value))).toEqual(pills)
      expect(await auditDom(page)).toEqual({ scriptUrls: [], handlers: [], strangers: [] })

      expect({
        dialogs: w.dialogs,
        pageErrors: w.pageErrors,
        csp: w.consoleErrors.filter((e) => CSP_ERROR.test(e)),
        foreign: w.foreign,
      }).toEqual({
        dialogs: [],
        pageErrors: [],
        csp: [],
        foreign: [],
      })
      await context.close()
    },
    TIMEOUT_MS,
  )

  /*
   * Text the API stores exactly, which a form shows and sends back otherwise: a title and a
   * description with line breaks (an <input> drops them), a body and a bio that start with a
   * newline (the parser drops one after <textarea>), CRLF and a lone CR (a textarea shows them as
   * LF, and the browser sends every line break as CRLF). Saved unedited, nothing changes.
   */
  skipIf(noChromium).test(
    'saves the editor and the settings sent back unedited without changing a byte; a comment keeps its newlines',
    async () => {
      const site = await serveSite()
      const ada = await user(site.app, 'ada', { bio: '\nline one\nline two', image: 'not a URL,\nin two lines' })
      const a = await createArticle(site.app, ada.token, {
        title: 'Two\nlines title',
        description: 'About\r\ntwo lines',
        body: '\nIndented code after a blank first line:\n\n    x = 1\n\nSent with CRLF\r\nand a lone CR\rto the API.\n',
        tagList: ['t', 'two words'],
      })
      /** The article at `slug` (the page's, after a save: a new title would have given a new one). */
      const article = async (slug = a.slug) => {
        const res = await site.app.request('GET', `/api/articles/${slug}`)
        const { title, description, body, tagList } = res.body.article ?? {}
        return JSON.stringify({ slug, title, description, body, tagList })
      }
      const me = async () => {
        const { username, email, bio, image } = (await site.app.request('GET', '/api/user', { token: ada.token })).body.user
        return JSON.stringify({ username, email, bio, image })
      }
      // (as JSON: a CR that differs shows in a failure's diff)
      const [articleBefore, userBefore] = [await article(), await me()]
      const context = await openContext(browser(), site, ada)
      const w = await watch(context, site)
      const page = await context.newPage()
      const here = () => new URL(page.url()).pathname

      await visit(page, site, `/editor/${a.slug}`)
      // the body as a textarea can hold it: its CRs are LFs (the parser reads a page's CR as LF)
      expect(await page.locator('textarea[name="body"]').inputValue()).toBe(a.body.replace(/\r\n?/g, '\n'))
      await Promise.all([page.waitForURL('**/article/**'), page.click('button:has-text("Publish Article")')])
      expect(await article(here().slice('/article/'.length))).toBe(articleBefore)

      await visit(page, site, '/settings')
      expect(await page.locator('textarea[name="bio"]').inputValue()).toBe('\nline one\nline two')
      await Promise.all([page.waitForURL('**/profile/**'), page.click('button:has-text("Update Settings")')])
      expect({ page: here(), user: await me() }).toEqual({ page: '/profile/ada', user: userBefore })
      // shown with its line breaks, as a comment is (below): what the layout shows, so innerText
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked
      expect((await page.locator('.user-info p').innerText()).trim()).toBe('line one\nline two')

      // a refused comment comes back as typed, its first newline too; a posted one is stored with LF
      await visit(page, site, `/article/${a.slug}`)
      await page.fill('textarea[name="body"]', '\n\n  ')
      await Promise.all([page.waitForURL(site.url(`/article/${a.slug}/comments`)), page.click('button:has-text("Post Comment")')])
      expect(await page.locator('.error-messages li').allTextContents()).toEqual(["body can't be blank"])
      expect(await page.locator('textarea[name="body"]').inputValue()).toBe('\n\n  ')
      await page.fill('textarea[name="body"]', '\nfirst line\nsecond line\n')
      await Promise.all([page.waitForURL(site.url(`/article/${a.slug}#comments`)), page.click('button:has-text("Post Comment")')])
      const comments = (await site.app.request('GET', `/api/articles/${a.slug}/comments`)).body.comments
      expect(comments.map((c: { body: string }) => c.body)).toEqual(['\nfirst line\nsecond line\n'])
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked
      expect((await page.locator('.card-text', { hasText: 'first line' }).innerText()).trim()).toBe('first line\nsecond line')

      expect({ dialogs: w.dialogs, pageErrors: w.pageErrors, foreign: w.foreign }).toEqual({ dialogs: [], pageErrors: [], foreign: [] })
      await context.close()
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium || why.sqlitePass).test(
    'has no serious or critical axe-core violations on any page',
    async () => {
      const s = await smallSite()
      const found: { as: string; path: string; violations: unknown[] }[] = []
      const pages = {
        signedOut: [
          ['/', 200],
          ['/tag/x', 200],
          [`/article/${s.mine.slug}`, 200],
          ['/profile/ada', 200],
          ['/login', 200],
          ['/register', 200],
          ['/no-such-page', 404],
        ] as [string, number][],
        signedIn: [
          ['/', 200],
          ['/?feed=following', 200],
          [`/article/${s.mine.slug}`, 200],
          [`/article/${s.theirs.slug}`, 200],
          ['/profile/ada', 200],
          ['/profile/bob', 200],
          ['/editor', 200],
          [`/editor/${s.mine.slug}`, 200],
          [`/editor/${s.theirs.slug}`, 403],
          ['/settings', 200],
        ] as [string, number][],
        // bob follows no one: his feed says so, with a link in its line of text
        emptyFeed: [['/?feed=following', 200]] as [string, number][],
      }
      let checked = 0
      for (const [as, list] of [
        [undefined, pages.signedOut],
        [s.ada, pages.signedIn],
        [s.bob, pages.emptyFeed],
      ] as const) {
        const context = await openContext(browser(), s.site, as)
        // axe comes with every page as the browser's own script (not an inline one the page's CSP would refuse)
        await context.addInitScript({ path: AXE })
        const audit = async (page: Page, path: string) => {
          const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }))
          const violations = (result.violations as any[])
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => ({
              id: v.id,
              impact: v.impact,
              help: v.help,
              nodes: v.nodes.map((n: any) => `${n.target.join(' ')}: ${n.failureSummary}`),
            }))
          if (violations.length) found.push({ as: as ? as.username : 'signed out', path, violations })
          checked++
        }
        await visitAll(context, s.site, list, audit)
        // and a form with its errors shown
        if (!as) {
          const page = await context.newPage()
          await visit(page, s.site, '/login')
          await page.fill('input[name="email"]', s.ada.email)
          await page.fill('input[name="password"]', 'not-the-password')
          await Promise.all([page.waitForURL('**/login'), page.click('button[type="submit"]')])
          expect(await page.locator('.error-messages li').count()).toBeGreaterThan(0)
          await audit(page, '/login (refused)')
        }
        await context.close()
      }
      if (found.length) console.log(JSON.stringify(found, null, 2))
      expect(found).toEqual([])
      expect(checked).toBe(pages.signedIn.length + pages.signedOut.length + pages.emptyFeed.length + 1)
    },
    TIMEOUT_MS,
  )

  /*
   * Only the keyboard: Tab to move, Enter to follow a link or press a button,
   * typing into fields. Every element Tab reaches must show that it has the
   * focus (an outline or a shadow).
   */
  skipIf(noChromium).test(
    'can be used with the keyboard alone: sign in, write an article, post a comment; the focus always shows',
    async () => {
      const site = await serveSite()
      const ada = await user(site.app, 'ada')
      const context = await openContext(browser(), site)
      const w = await watch(context, site)
      const page = await context.newPage()
      const reached: Focused[] = []
      /** Presses Tab until the focused element is `want`; fails after `max` presses. */
      const tabTo = async (want: (f: Focused) => boolean, what: string, max = 60) => {
        for (let i = 0; i < max; i++) {
          await page.keyboard.press('Tab')
          const f = await focused(page)
          if (!f) continue
          reached.push(f)
          if (want(f)) return
        }
        throw new Error(`${what}: not reached by ${max} presses of Tab (reached: ${reached.map((f) => `${f.tag} ${f.name}`).join(' | ')})`)
      }
      const link = (text: string) => (f: Focused) => f.tag === 'a' && f.name === text
      const button = (text: string) => (f: Focused) => f.tag === 'button' && f.name === text
      const field = (name: string) => (f: Focused) => (f.tag === 'input' || f.tag === 'textarea') && f.name === name
      /** Presses Enter on a link or a button: the next page loads, at `url`. */
      const enterTo = async (url: string) => {
        await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')])
        expect(page.url()).toBe(site.url(url))
      }

      await visit(page, site, '/')
      await tabTo(link('Sign in'), 'the navbar’s Sign in')
      await enterTo('/login')
      await tabTo(field('email'), 'the email field')
      await page.keyboard.type(ada.email)
      await tabTo(field('password'), 'the password field')
      await page.keyboard.type(ada.password)
      await enterTo('/')
      expect(await debugUser(page)).toMatchObject({ username: 'ada' })

      await tabTo(link('New Article'), 'the navbar’s New Article')
      await enterTo('/editor')
      await tabTo(field('title'), 'the title')
      await page.keyboard.type('Typed, not clicked')
      await tabTo(field('description'), 'the description')
      await page.keyboard.type('An article written with the keyboard')
      await tabTo(field('body'), 'the body')
      await page.keyboard.type('# Keys\n\nOnly keys were pressed.')
      await tabTo(field('tags'), 'the tags')
      await page.keyboard.type('keyboard')
      await page.keyboard.press('Enter')
      await page.keyboard.type('mistake')
      await page.keyboard.press('Enter')
      expect(await texts(page, '.editor-form .tag-pill')).toEqual(['keyboard', 'mistake'])
      // a pill's × is a button of the keyboard too
      await tabTo((f) => f.name === 'Remove the tag mistake', 'the × of the tag "mistake"')
      await page.keyboard.press('Enter')
      expect(await texts(page, '.editor-form .tag-pill')).toEqual(['keyboard'])
      await tabTo(button('Publish Article'), 'Publish Article')
      await enterTo('/article/typed-not-clicked')
      expect(await texts(page, '.article-page .banner h1')).toEqual(['Typed, not clicked'])
      expect(await texts(page, '.article-content .tag-list li')).toEqual(['keyboard'])

      await tabTo(field('body'), 'the comment field')
      await page.keyboard.type('Said with the keyboard.')
      await tabTo(button('Post Comment'), 'Post Comment')
      await enterTo('/article/typed-not-clicked#comments')
      expect(await texts(page, '.card:not(.comment-form) .card-text')).toEqual(['Said with the keyboard.'])

      const unseen = reached.filter((f) => !f.visible).map((f) => `${f.tag} ${f.name}`)
      expect(reached.length).toBeGreaterThan(10)
      expect(unseen).toEqual([])
      expect(w).toEqual({ foreign: [], dialogs: [], consoleErrors: [], pageErrors: [] })
      await context.close()
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium || why.sqlitePass).test(
    'every page carries the Content-Security-Policy, has no inline script, and the browser refuses one',
    async () => {
      const s = await smallSite()
      let checked = 0
      for (const as of [undefined, s.ada]) {
        const context = await openContext(browser(), s.site, as)
        const w = await watch(context, s.site)
        const page = await context.newPage()
        for (const [path, status] of as ? s.signedIn : s.signedOut) {
          const res = await visit(page, s.site, path, status)
          const headers = await res.allHeaders()
          const csp = directives(headers['content-security-policy'] ?? '')
          expect({ path, csp }).toEqual({ path, csp: expect.objectContaining(REQUIRED_CSP) })
          // nothing loosens it: no 'unsafe-inline' or 'unsafe-eval', no host wildcard
          expect({ path, loose: Object.values(csp).filter((v) => /unsafe-|\*/.test(v)) }).toEqual({ path, loose: [] })
          expect({ path, nosniff: headers['x-content-type-options'], frames: headers['x-frame-options'] }).toEqual({
            path,
            nosniff: 'nosniff',
            frames: 'DENY',
          })
          const dom = await page.evaluate(() => ({
            inline: document.querySelectorAll('script:not([src])').length,
            scripts: [...document.scripts].map((s: any) => (s.src ? new URL(s.src).origin : 'inline')),
            styled: document.querySelectorAll('[style]').length,
          }))
          expect({ path, dom }).toEqual({ path, dom: { inline: 0, scripts: [s.site.origin], styled: 0 } })
          // an inline script put into the page does not run: the browser keeps the policy
          const before = w.consoleErrors.length
          const ran = await page.evaluate(() => {
            const script = document.createElement('script')
            script.textContent = 'window.__inlineRan = true'
            document.body.append(script)
            return window.__inlineRan === true
          })
          expect({ path, ran }).toEqual({ path, ran: false })
          const refused = () => w.consoleErrors.slice(before).some((e) => CSP_ERROR.test(e))
          // (the console message comes a moment after)
          for (let i = 0; i < 40 && !refused(); i++) await Bun.sleep(25)
          expect({ path, refused: refused() }).toEqual({ path, refused: true })
          checked++
        }
        await context.close()
      }
      expect(checked).toBe(s.signedIn.length + s.signedOut.length)
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium).test(
    'keeps what a person did: Back after signing out shows nothing private, two clicks send one comment, nothing widens a phone',
    async () => {
      const site = await serveSite()
      const ada = await user(site.app, 'ada', { bio: 'Private-ish bio' })
      const word = 'x'.repeat(180)
      const a = await createArticle(site.app, ada.token, {
        title: `A title with ${word}`,
        description: word,
        body: `${word}\n\n| a | b | c | d | e | f | g | h |\n|---|---|---|---|---|---|---|---|\n${'| wide cell content here '.repeat(8)}|\n`,
        tagList: [`t${word.slice(0, 39)}`],
      })
      await comment(site.app, ada.token, a.slug, word)
      const context = await openContext(browser(), site, ada)
      const w = await watch(context, site)
      const page = await context.newPage()

      // a phone's width: no page is wider than the screen, whatever its words
      await page.setViewportSize({ width: 360, height: 740 })
      for (const path of ['/', `/article/${a.slug}`, '/profile/ada', `/tag/t${word.slice(0, 39)}`, `/editor/${a.slug}`]) {
        await visit(page, site, path)
        expect({ path, width: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ path, width: 360 })
      }

      // two clicks on Post Comment while the first answer is on its way: one comment
      await page.route('**/comments', async (route) => {
        await Bun.sleep(1500)
        // (a request the page gave up meanwhile, a navigation's, is handled already: nothing to continue)
        await route.continue().catch(() => {})
      })
      await visit(page, site, `/article/${a.slug}`)
      await page.fill('textarea[placeholder="Write a comment..."]', 'Once only')
      const button = page.locator('button:has-text("Post Comment")')
      await button.click()
      await Bun.sleep(300)
      await button.click({ noWaitAfter: true, force: true }).catch(() => {})
      await page.waitForURL(site.url(`/article/${a.slug}#comments`))
      await page.waitForLoadState('load')
      const bodies = (await site.app.request('GET', `/api/articles/${a.slug}/comments`)).body.comments.map((c: { body: string }) => c.body)
      expect(bodies.filter((b: string) => b === 'Once only')).toHaveLength(1)
      await page.unroute('**/comments')

      expect({ dialogs: w.dialogs, pageErrors: w.pageErrors, foreign: w.foreign }).toEqual({ dialogs: [], pageErrors: [], foreign: [] })
      await context.close()

      // Back, in a context that intercepts nothing (Playwright turns the browser's cache off for one that does):
      // after a favorite the home page shows it, and after signing out the settings are not shown
      const bob = await user(site.app, 'bob')
      const plain = await openContext(browser(), site, bob)
      const tab = await plain.newPage()
      await visit(tab, site, '/')
      await Promise.all([tab.waitForURL(site.url(`/article/${a.slug}`)), tab.click(`a.preview-link[href="/article/${a.slug}"]`)])
      await tab.click('.banner button:has-text("Favorite")')
      await tab.locator('.banner button:has-text("Unfavorite")').waitFor()
      const back = async (to: string) => {
        await tab.goBack({ waitUntil: 'load' })
        expect(new URL(tab.url()).pathname).toBe(to)
      }
      await back(`/article/${a.slug}`)
      await back('/')
      expect(await tab.locator(`.article-preview:has(a[href="/article/${a.slug}"]) button`).textContent()).toContain('1')
      await visit(tab, site, '/settings')
      expect(await tab.locator('input[name="email"]').inputValue()).toBe(bob.email)
      await tab.click('button:has-text("Or click here to logout")')
      await tab.locator('a.nav-link:has-text("Sign in")').waitFor()
      await back('/login')
      expect(await tab.content()).not.toContain(bob.email)
      await plain.close()
    },
    TIMEOUT_MS,
  )

  skipIf(noChromium).test(
    'without scripts a tag is taken off by its ×, and Enter in a field publishes',
    async () => {
      const site = await serveSite()
      const ada = await user(site.app, 'ada')
      const a = await createArticle(site.app, ada.token, { title: 'Tagged', description: 'd', body: 'b', tagList: ['keep', 'drop'] })
      const context = await browser().newContext({ javaScriptEnabled: false })
      await context.addCookies([{ name: SESSION_COOKIE, value: ada.token, url: site.origin, httpOnly: true, sameSite: 'Lax' }])
      const page = await context.newPage()
      await visit(page, site, `/editor/${a.slug}`)
      await Promise.all([page.waitForEvent('load'), page.click('.tag-pill:has-text("drop") i')])
      expect(await texts(page, '.editor-form .tag-pill')).toEqual(['keep'])
      // nothing is saved by the ×
      expect((await site.app.request('GET', `/api/articles/${a.slug}`)).body.article.tagList.sort()).toEqual(['drop', 'keep'])
      await page.fill('input[name="title"]', 'Tagged again')
      await Promise.all([page.waitForURL('**/article/**'), page.press('input[name="title"]', 'Enter')])
      const saved = (await site.app.request('GET', '/api/articles?author=ada')).body.articles[0]
      expect({ title: saved.title, tags: saved.tagList }).toEqual({ title: 'Tagged again', tags: ['keep'] })
      await context.close()
    },
    TIMEOUT_MS,
  )
})

/** The CSP directives every page must have, as the browser reads them. */
const REQUIRED_CSP = {
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
}

/** A CSP header as directive → its sources. */
function directives(header: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const d of header.split(';')) {
    const [name, ...sources] = d.trim().split(/\s+/)
    if (name) out[name] = sources.join(' ')
  }
  return out
}

/**
 * A field's payloads, each calling alert() with the field's code (`ti` for
 * the title...), so a dialog says which field let it through. Each is 40
 * characters at most, what a tag may hold.
 */
function payloads(code: string): string[] {
  return [
    `<script>alert("${code}")</script>`,
    `<img src=x onerror=alert("${code}")>`,
    `javascript:alert("${code}")`,
    `data:text/html,<svg onload=alert("${code}")>`,
    `"><svg onload=alert("${code}")>'`,
  ]
}

/** Markup an article body shows as text (markdown-it with html off). */
const RAW_HTML = [
  '<script>alert("bo")</script>',
  '<img src=x onerror=alert("bo")>',
  '"><svg onload=alert("bo")>',
  '<a href="javascript:alert(\'bo\')">a raw link</a>',
  '<iframe src="javascript:alert(\'bo\')"></iframe>',
]
/** An article body with raw HTML, script URLs in links and images of every Markdown form, and one safe link. */
const MARKDOWN = [
  '# A heading <script>alert("bo")</script>',
  '',
  ...RAW_HTML,
  '',
  '[a javascript: link](javascript:alert("bo"))',
  '[a JavaScript: link](JAVASCRIPT:alert("bo"))',
  '[a spaced link]( javascript:alert("bo") )',
  '[a data: link](data:text/html;base64,PHNjcmlwdD5hbGVydCgiYm8iKTwvc2NyaXB0Pg==)',
  '[a vbscript: link](vbscript:msgbox("bo"))',
  '![a javascript: image](javascript:alert("bo"))',
  '![a data: image](data:text/html;base64,PHNjcmlwdD5hbGVydCgiYm8iKTwvc2NyaXB0Pg==)',
  '![an svg image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoImJvIik+)',
  // (markdown-it allows data: images of raster types; the page's CSP would refuse them)
  '![a png image](data:image/png;base64,iVBORw0KGgo=)',
  '<javascript:alert("bo")>',
  '[a reference link][r]',
  '',
  '[r]: javascript:alert("bo")',
  '',
  '[a safe link](https://example.invalid/ok)',
  '',
].join('\n')
