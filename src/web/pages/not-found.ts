import { HttpError } from '../../errors.ts'
import { type Ctx, type Outcome, uncacheable } from '../context.ts'
import { html } from '../html.ts'

/** What is not here, with the words the not-found page tells the reader (answered by the web app's entry). */
export class MissingPage extends Error {}

/** `read`'s value; its 404 becomes this page's not-found, saying `message`. */
export async function orMissing<T>(read: Promise<T>, message: string): Promise<T> {
  try {
    return await read
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) throw new MissingPage(message)
    throw e
  }
}

/** A page for what is not here (an unknown article, profile or path): 404. */
export function notFoundPage(ctx: Ctx, message = 'There is no page at this address.'): Outcome {
  uncacheable(ctx)
  return {
    kind: 'page',
    status: 404,
    title: 'Not found',
    here: 'none',
    main: html`<div class="container page error-page"><h1>Not found</h1><p>${message}</p><p><a href="/">Back to the home page</a></p></div>`,
  }
}

/** A page for an action the user may not take, or that failed: its status and the API's words. */
export function errorPage(ctx: Ctx, status: number, lines: readonly string[]): Outcome {
  uncacheable(ctx)
  const title =
    status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status === 429 ? 'Too many attempts' : 'Something went wrong'
  return {
    kind: 'page',
    status,
    title,
    here: 'none',
    main: html`<div class="container page error-page"><h1>${title}</h1><div role="alert"><ul class="error-messages">${lines.map((l) => html`<li>${l}</li>`)}</ul></div><p><a href="/">Back to the home page</a></p></div>`,
  }
}
