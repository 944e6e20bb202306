import { type Html, html } from './html.ts'

/*
 * What a form's fields show, and what a browser sends back from them, so that a form saved
 * without an edit changes nothing (docs/DECISIONS.md, "The web app"):
 * - the HTML parser drops one newline right after `<textarea>`: every textarea starts with one
 *   of ours, so a text that starts with a newline keeps its own;
 * - a browser sends a textarea's line breaks as CRLF: they come back as LF. A CR typed on purpose
 *   cannot be among them: a textarea's value holds none (the parser reads a CR of the page as LF
 *   too), so every CR a browser sends is its own;
 * - an `<input>` drops line breaks, which the API allows in a title, a description or an image,
 *   and a textarea cannot show a CR: a field that sends back just what it showed keeps the
 *   stored text (`kept`), so saving unedited changes no title (nor its slug) and no stored CR.
 */

/** A textarea holding `text` exactly: the newline after the tag is the one the parser drops. */
export const textarea = (attributes: Html, text: string): Html => html`<textarea dir="auto" ${attributes}>\n${text}</textarea>`

/** A textarea's text as a browser sends it, its line breaks LF again (CRLF, and a lone CR). */
export const textareaText = (sent: string): string => sent.replace(/\r\n?/g, '\n')

/** What a field showing `stored` sends back when nobody edits it (a textarea's read with textareaText). */
const leftAlone = {
  input: (stored: string) => stored.replace(/[\r\n]/g, ''),
  textarea: textareaText,
}

/**
 * What a form field that showed `stored` saves: `stored` itself when `sent` (a textarea's read
 * with textareaText) is what the field sends back unedited, else `sent`.
 */
export const kept = (field: keyof typeof leftAlone, sent: string, stored: string): string =>
  sent === leftAlone[field](stored) ? stored : sent

/** The version of what a form showed (`seen`), which its page compares before it saves (the editor, the settings). */
export const seenField = (seen: string | undefined): Html | '' =>
  seen === undefined ? '' : html`<input type="hidden" name="seen" value="${seen}">`
