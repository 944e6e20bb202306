import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { check, importsOf, layerOf } from '../../scripts/layers.ts'

const SRC = join(import.meta.dir, '../../src')

/** The real tree as check() reads it, to plant a violation in. */
function tree(): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.ts')) out.set(relative(SRC, path), readFileSync(path, 'utf8'))
    }
  }
  walk(SRC)
  return out
}

describe('scripts/layers.ts (bun run lint)', () => {
  test('the tree keeps its layers and rules', () => {
    expect(check(SRC)).toEqual([])
  })

  test('an upward import fails it: the storage layer importing a feature, a feature importing the app', () => {
    const files = tree()
    files.set('db/store.ts', `import { userRoutes } from '../users/routes.ts'\n${files.get('db/store.ts')}`)
    files.set('articles/reads.ts', `${files.get('articles/reads.ts')}\nconst app = await import('../app.ts')\n`)
    expect(check(files)).toEqual([
      { file: 'articles/reads.ts', message: 'imports app.ts (app) from the features layer below it' },
      { file: 'db/store.ts', message: 'imports users/routes.ts (features) from the db layer below it' },
    ])
  })

  test('an import without its extension fails it: `../app` places nowhere, and would pass any layer', () => {
    const files = tree()
    files.set('articles/reads.ts', `import { createApp } from '../app'\n${files.get('articles/reads.ts')}`)
    files.set('db/store.ts', `import { loadConfig } from '../config'\n${files.get('db/store.ts')}`)
    expect(check(files)).toEqual([
      { file: 'articles/reads.ts', message: 'imports app, which no layer holds: name the file with its extension' },
      { file: 'db/store.ts', message: 'imports config, which no layer holds: name the file with its extension' },
    ])
  })

  test("each speed rule fails it: a read called directly, an answer's own headers changed, steps made per call", () => {
    const files = new Map([
      ['http/a.ts', 'export const f = (route: any, i: any) => route.read.cached(i, 0)\n'],
      ['http/b.ts', "export const g = (r: Response) => r.headers.set('x-id', '1')\n"],
      ['users/c.ts', 'export function w() {\n  function* steps() {}\n  return steps\n}\n'],
      // in a comment, none of them counts
      ['http/d.ts', '// read.cached(x) and response.headers.set(...)\nexport const ok = 1\n'],
    ])
    expect(check(files).map((v) => v.file)).toEqual(['http/a.ts', 'http/b.ts', 'users/c.ts'])
  })

  test('a // or /* inside a string, a template or a regular expression hides nothing after it', () => {
    const files = new Map([
      ['http/a.ts', "export const f = (r: any) => fetch('http://x') && r.read.cached(1, 0)\n"],
      ['http/b.ts', 'export const f = (r: any) => `text/*` && r.read.build(1, 0) // */\n'],
      ['http/c.ts', "const re = /^[']+:\\/\\//\nexport const f = (r: any) => re.test('') && r.read.cached(1, 0)\n"],
      // nor does a quote in a regular expression make a string of a comment
      ['http/d.ts', "const re = /[`']/\n/** read.cached(x) */\nexport const ok = re\n"],
    ])
    expect(check(files).map((v) => v.file)).toEqual(['http/a.ts', 'http/b.ts', 'http/c.ts'])
  })

  test('a file in a folder no layer names fails it', () => {
    expect(check(new Map([['widgets/w.ts', 'export {}\n']]))).toEqual([
      { file: 'widgets/w.ts', message: expect.stringContaining('belongs to no layer') },
    ])
    expect(layerOf('articles/list-worker.ts')).toBe('features')
    expect(layerOf('names.ts')).toBe('leaves')
  })

  test('reads every kind of import: static, type-only, re-export, dynamic, a worker URL', () => {
    const text = [
      "import { a } from './a.ts'",
      "import type { B } from '../b.ts'",
      "export { c } from './c.ts'",
      "const d = await import('./d.ts')",
      "new Worker(new URL('./e.ts', import.meta.url).href)",
      "import { f } from 'elysia'",
    ].join('\n')
    expect(importsOf(text).sort()).toEqual(['../b.ts', './a.ts', './c.ts', './d.ts', './e.ts'])
  })
})
