/**
 * Usernames: letters and digits of any script plus `_`, `-`, `.`, stored in
 * Unicode NFKC (full-width `ｊａｋｅ` is `jake`, a decomposed `é` is one
 * character), unique on that form with ASCII case folded (the contract's
 * "unique ignoring ASCII case"). Refused: invisible characters (fillers such
 * as U+3164, which Unicode counts as letters) and names mixing scripts in a
 * way no language does (`аlice` with a Cyrillic `а`), after UTS #39's
 * "highly restrictive" rule: one script, or Latin with the scripts Chinese,
 * Japanese or Korean are written in.
 */

const ALLOWED = /^[\p{L}\p{N}_.-]+$/u
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/u

/** Scripts a username may use; a letter of any other script counts as its own "script". */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
  'Tifinagh',
  'Canadian_Aboriginal',
] as const
const SCRIPT_RES = SCRIPTS.map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, 'u')] as const)
const COMMON = /^[\p{Script=Common}\p{Script=Inherited}]$/u

/** Script sets that languages really combine (UTS #39 "highly restrictive"). */
const COMBINATIONS: ReadonlySet<string>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
]

function scriptOf(ch: string): string | undefined {
  if (COMMON.test(ch)) return undefined
  for (const [name, re] of SCRIPT_RES) if (re.test(ch)) return name
  return `other:${ch}`
}

/** The scripts of a name's letters and digits (Common and Inherited ones left out). */
function scriptsOf(name: string): Set<string> {
  const out = new Set<string>()
  for (const ch of name) {
    const s = scriptOf(ch)
    if (s) out.add(s)
  }
  return out
}

/** Why a (normalised) username is refused, or undefined when it is fine. */
export function usernameProblem(name: string): string | undefined {
  // `.` and `..` are path segments every URL parser removes: /profile/.. is /
  if (!ALLOWED.test(name) || INVISIBLE.test(name) || name === '.' || name === '..') return 'is invalid'
  const scripts = scriptsOf(name)
  if (scripts.size > 1 && !COMBINATIONS.some((c) => [...scripts].every((s) => c.has(s)))) {
    return 'mixes letters of different scripts'
  }
  return undefined
}
