import MarkdownIt from 'markdown-it'
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

/** An article body as HTML. */
export const markdown = (body: string): Html => trusted(md.render(body))
