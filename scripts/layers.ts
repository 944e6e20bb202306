#!/usr/bin/env bun
/**
 * `bun scripts/layers.ts` (part of `bun run lint`): the structure docs/ARCHITECTURE.md states,
 * checked. Every file under src/ belongs to one layer, and imports only from its own layer or
 * the ones below it:
 *
 *   entry -> cli -> server -> app -> features -> http/cache -> db -> leaves
 *
 * and the rules that keep the service fast hold (docs/PERFORMANCE.md, "Rules a change must
 * keep"). Prints one line per violation and exits 1 when there is any.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

export const LAYERS = ['entry', 'cli', 'server', 'app', 'features', 'http/cache', 'db', 'leaves'] as const
export type Layer = (typeof LAYERS)[number]

/** Where each file of src/ belongs: the first pattern that matches its path (relative to src/). */
const PLACES: [RegExp, Layer][] = [
  [/^main\.ts$/, 'entry'],
  [/^cli\//, 'cli'],
  [/^(server|cluster)\.ts$/, 'server'],
  [/^app\.ts$/, 'app'],
  [/^(users|profiles|articles|comments|tags|web)\//, 'features'],
  [/^(http|cache|metrics)\//, 'http/cache'],
  [/^db\//, 'db'],
  [/^(keys|auth)\/|^(errors|lane|log|random|config|names|trace)\.ts$|^types\.d\.ts$/, 'leaves'],
]

export const layerOf = (path: string): Layer | undefined => PLACES.find(([re]) => re.test(path))?.[1]

/** The relative modules a file imports: static and dynamic imports, re-exports, and `new URL('./x.ts', import.meta.url)` (a worker). */
export function importsOf(text: string): string[] {
  const out: string[] = []
  for (const re of [
    /^\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
    /^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm,
    /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
    /new URL\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
  ])
    for (const m of text.matchAll(re)) out.push(m[1]!)
  return out
}

/** A rule a file's text must keep: a pattern that must not occur, and why. */
interface Rule {
  pattern: RegExp
  why: string
}
export const RULES: Rule[] = [
  {
    // answerRead calls them through Reflect.apply: a plain call lets the JIT inline every read into the entry
    pattern: /\.(cached|build)\(/,
    why: "a read's cached/build is called only by answerRead (src/http/dispatch.ts), through Reflect.apply",
  },
  {
    pattern: /\.headers\.(set|append|delete)\(/,
    why: "never change an answer's own headers: give a Response its headers when it is made",
  },
  {
    // a function* made per call gives its generators new shapes, and the JIT compiles the steps again and again
    pattern: /^[ \t]+(?:async\s+)?function\s*\*|=\s*function\s*\*/m,
    why: 'write steps (function*) are declared at module level, never made per call',
  },
]

export interface Violation {
  file: string
  message: string
}

function filesUnder(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...filesUnder(path))
    else if (/\.(ts|tsx)$/.test(name)) out.push(path)
  }
  return out
}

/**
 * A file's code: comments removed; strings, templates and regular expressions kept whole, so that
 * a `//` or `/*` inside one ('http://x', `${major}/*`) neither hides the code after it nor is taken
 * for a comment. A `/` after an operator or an opening bracket starts a regular expression.
 */
const TOKENS =
  /('(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`|(?<=[(,=:[!&|?{};]\s*)\/(?![*/])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n[])+\/[dgimsuyv]*)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g
const codeOf = (text: string): string => text.replace(TOKENS, (_, kept?: string) => kept ?? '')

/** Every violation of the layers and rules in `src` (a map of path relative to src/ to text, or the directory). */
export function check(src: string | Map<string, string>): Violation[] {
  const files = typeof src === 'string' ? new Map(filesUnder(src).map((f) => [relative(src, f), readFileSync(f, 'utf8')] as const)) : src
  const out: Violation[] = []
  for (const [file, text] of files) {
    const layer = layerOf(file)
    if (!layer) {
      out.push({ file, message: 'belongs to no layer: add its folder to PLACES in scripts/layers.ts and docs/ARCHITECTURE.md' })
      continue
    }
    for (const spec of importsOf(text)) {
      const target = normalize(join(dirname(file), spec))
      if (target.startsWith('..')) continue // package.json and the like, outside src/
      const to = layerOf(target)
      // `../app` (no extension) would place nowhere and so pass: every import names its file whole
      if (!to) out.push({ file, message: `imports ${target}, which no layer holds: name the file with its extension` })
      else if (LAYERS.indexOf(to) < LAYERS.indexOf(layer))
        out.push({ file, message: `imports ${target} (${to}) from the ${layer} layer below it` })
    }
    const code = codeOf(text)
    for (const rule of RULES) if (rule.pattern.test(code)) out.push({ file, message: rule.why })
  }
  return out
}

if (import.meta.main) {
  const violations = check(join(import.meta.dir, '..', 'src'))
  for (const v of violations) console.log(`src/${v.file}: ${v.message}`)
  console.log(violations.length ? `layers: ${violations.length} violation(s)` : 'layers: every import goes down, every rule holds')
  process.exit(violations.length ? 1 : 0)
}
