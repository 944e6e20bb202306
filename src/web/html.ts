/**
 * HTML from templates, escaped by default: every value put into `html`...``
 * is escaped as text (attribute values included) unless it is itself Html,
 * built by `html` or marked trusted with `trusted` (the markdown renderer's
 * output). A page is built only this way, so no user text reaches a page
 * unescaped.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const SPECIAL = /[&<>"']/g
// (a regex without `g` for the test: a global one keeps its position between calls)
const ANY_SPECIAL = /[&<>"']/

/** Text as HTML: the characters that could open a tag or close an attribute, escaped. */
export const escapeHtml = (text: string): string => (ANY_SPECIAL.test(text) ? text.replace(SPECIAL, (c) => ESCAPES[c]!) : text)

function piece(v: unknown): string {
  if (v instanceof Html) return v.value
  if (v === null || v === undefined || v === false) return ''
  if (Array.isArray(v)) return v.map(piece).join('')
  return escapeHtml(String(v))
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!
  return new Html(out)
}

/** HTML someone already made safe (the markdown renderer's, which escapes every tag). */
export const trusted = (value: string): Html => new Html(value)
