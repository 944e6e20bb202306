#!/usr/bin/env bun
/**
 * Writes docs/screenshot.png, the README's picture of the site: serves this
 * checkout on a fresh SQLite file, writes a few articles through the API,
 * and photographs the home page in Debian's Chromium (`CHROMIUM`, default
 * /usr/bin/chromium).
 *
 *   bun scripts/screenshot.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from '@playwright/test'

const ROOT = resolve(import.meta.dir, '..')
const dir = mkdtempSync(join(tmpdir(), 'conduit-screenshot-'))
const port = 20_000 + Math.floor(Math.random() * 20_000)
const site = `http://127.0.0.1:${port}`
const server = Bun.spawn(['bun', join(ROOT, 'src/main.ts')], {
  cwd: dir,
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_PATH: join(dir, 'conduit.db') },
  stdout: 'ignore',
  stderr: 'inherit',
})

async function post(path: string, body: unknown, token?: string): Promise<{ user: { token: string } }> {
  const res = await fetch(`${site}/api${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as { user: { token: string } }
}

const ARTICLES = [
  [
    'ada',
    'How we cut our cloud bill in half',
    'Moving three services onto one small machine, and what we measured on the way.',
    ['ops', 'cost'],
  ],
  ['grace', 'Notes from a year of pair programming', 'What changed when every change had two authors.', ['teams']],
  ['linus', 'A gentle introduction to SQLite', 'The database you already have, and why it is often enough.', ['sqlite', 'databases']],
  ['ada', 'Writing error messages people can act on', 'One line, the thing involved, the way out.', ['design']],
] as const

try {
  for (
    let i = 0;
    i < 100 &&
    !(await fetch(`${site}/ready`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  )
    await Bun.sleep(100)
  const tokens = new Map<string, string>()
  for (const name of new Set(ARTICLES.map((a) => a[0]))) {
    const { user } = await post('/users', { user: { username: name, email: `${name}@example.com`, password: `${name}-password-1` } })
    tokens.set(name, user.token)
  }
  for (const [author, title, description, tagList] of ARTICLES) {
    await post('/articles', { article: { title, description, body: `${description}\n\nMore soon.`, tagList } }, tokens.get(author))
    await Bun.sleep(20)
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] })
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 } })
  await page.goto(`${site}/`)
  await page.screenshot({ path: join(ROOT, 'docs/screenshot.png') })
  await browser.close()
  console.log('wrote docs/screenshot.png')
} finally {
  server.kill()
  await server.exited
  rmSync(dir, { recursive: true, force: true })
}
