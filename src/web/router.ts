/**
 * The web app's page routes: a path template (`/article/:slug`) per method,
 * matched segment by segment; a parameter is one percent-decoded segment.
 */
export interface Match<H> {
  handler: H
  params: Record<string, string>
  /** the template, as metrics label it */
  template: string
}

interface Entry<H> {
  method: string
  template: string
  parts: string[]
  handler: H
}

export class Router<H> {
  private readonly entries: Entry<H>[] = []

  add(method: 'GET' | 'POST', template: string, handler: H): this {
    this.entries.push({ method, template, parts: template.split('/').filter(Boolean), handler })
    return this
  }

  get templates(): string[] {
    return [...new Set(this.entries.map((e) => e.template))]
  }

  /** Whether any route has this path, whatever its method (a page path is never the framework's). */
  has(path: string): boolean {
    return this.entries.some((e) => params(e.parts, path) !== undefined)
  }

  match(method: string, path: string): Match<H> | undefined {
    const m = method === 'HEAD' ? 'GET' : method
    for (const e of this.entries) {
      if (e.method !== m) continue
      const p = params(e.parts, path)
      if (p) return { handler: e.handler, params: p, template: e.template }
    }
    return undefined
  }
}

function params(parts: readonly string[], path: string): Record<string, string> | undefined {
  // one trailing slash is ignored, as the API's router does
  const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/').filter(Boolean)
  if (segments.length !== parts.length) return undefined
  const out: Record<string, string> = {}
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const segment = segments[i]!
    if (part.startsWith(':')) {
      try {
        out[part.slice(1)] = decodeURIComponent(segment)
      } catch {
        return undefined
      }
    } else if (part !== segment) return undefined
  }
  return out
}
