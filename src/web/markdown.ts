import MarkdownIt from 'markdown-it'
import type { StateBlock } from 'markdown-it'
import type { Caches } from '../cache/caches.ts'
import { Flights } from '../cache/flights.ts'
import { Lane, workerModule } from '../lane.ts'
import { type Html, trusted } from './html.ts'

/**
 * Article bodies are Markdown, rendered by markdown-it with raw HTML turned
 * off: a tag written in a body shows as text, never as markup, so no script,
 * event handler or frame can come through. Links and images go through
 * markdown-it's own check, which refuses `javascript:`, `vbscript:` and
 * `file:` URLs, and `data:` ones, here all of them (markdown-it lets raster
 * images through, which the page's CSP would refuse to load). Links get
 * `rel="nofollow ugc noopener"`: they are what users wrote.
 */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false })
const defaultValidateLink = md.validateLink.bind(md)
md.validateLink = (url) => !url.trim().toLowerCase().startsWith('data:') && defaultValidateLink(url)
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, i, options, _env, self) => self.renderToken(tokens, i, options))
md.renderer.rules.link_open = (tokens, i, options, env, self) => {
  tokens[i]!.attrSet('rel', 'nofollow ugc noopener')
  return defaultLinkOpen(tokens, i, options, env, self)
}

/**
 * Table cells a body may make. markdown-it fills a short row with empty cells (up to 65,536 a
 * table): a header 250 columns wide over rows of one character each made 1.3 MB of HTML out of
 * 3.5 KB, and 43 MB (and 4 GB of memory) out of the 100,000 characters a body may have. Past the
 * budget a table ends, and the lines after it are paragraphs.
 */
export const TABLE_CELLS = 10_000
type BlockRule = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean
const table = (md.block.ruler as unknown as { __rules__: { name: string; fn: BlockRule }[] }).__rules__.find((r) => r.name === 'table')!.fn
md.block.ruler.at(
  'table',
  (state, startLine, endLine, silent) => {
    // whether a table starts here (the rule's own checks), before anything else: every block start asks
    const here = table(state, startLine, endLine, true)
    if (!here || silent) return here
    const env = state.env as { tableCells?: number }
    const used = env.tableCells ?? 0
    // the columns as the rule counts them: the delimiter row's cells (it holds no escaped bar), outer bars aside
    const delimiter = state.src.slice(state.bMarks[startLine + 1]! + state.tShift[startLine + 1]!, state.eMarks[startLine + 1]).trim()
    const columns =
      delimiter.split('|').length - (delimiter.startsWith('|') ? 1 : 0) - (delimiter.endsWith('|') && delimiter.length > 1 ? 1 : 0)
    const rows = Math.floor((TABLE_CELLS - used) / columns)
    // the header and the delimiter row, then as many rows as the budget holds
    if (rows < 1 || !table(state, startLine, Math.min(endLine, startLine + 1 + rows), silent)) return false
    env.tableCells = used + columns * (state.line - startLine - 1)
    return true
  },
  { alt: ['paragraph', 'reference'] },
)

/** Markdown as HTML, on this thread. */
export const renderMarkdown = (body: string): string => md.render(body)

/**
 * Bodies up to this many characters are rendered on the event loop, a few milliseconds at worst:
 * markdown-it takes up to ~1.5 µs a character of a body written to be slow (`![[` repeated), so
 * a body of the 1 MiB a request may carry would hold every other request for over a second.
 */
export const INLINE_CHARS = 4096

/**
 * Article bodies as HTML, kept per article with the text they were rendered from (a kept one
 * counts only for that very text: exact whatever changed), so that a page built again (another
 * reader, a parameter it does not read) renders nothing. A long body is rendered on a lane of
 * its own (src/lane.ts), once however many readers wait for it.
 */
export function bodyRenderer(caches: Caches) {
  const kept = caches.part<string, { source: string; html: string }>('bodies', (v) => (v.source.length + v.html.length) * 2)
  // renders under way, by the text itself: readers of one text wait for one rendering
  const rendering = new Flights<string, string>(caches.versions)
  let lane: Lane<string, string> | undefined
  const keep = (slug: string, source: string, html: string, at: number) => kept.set(slug, { value: { source, html }, deps: [] }, at)
  return {
    /** The body of the article at `slug` as HTML. */
    render(slug: string, body: string): Html | Promise<Html> {
      const found = kept.get(slug)
      if (found?.source === body) return trusted(found.html)
      const at = caches.versions.clock
      if (body.length <= INLINE_CHARS) {
        const html = renderMarkdown(body)
        keep(slug, body, html, at)
        return trusted(html)
      }
      const onLane = (lane ??= new Lane(workerModule('web/markdown-worker.ts')))
      return rendering
        .share(body, [], () => onLane.ask(body))
        .then((h) => {
          keep(slug, body, h, at)
          return trusted(h)
        })
    },
    close(): void {
      lane?.close()
    },
  }
}
export type BodyRenderer = ReturnType<typeof bodyRenderer>
