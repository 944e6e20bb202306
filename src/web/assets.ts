// Embedded in the compiled binary: the site needs no file beside it and no other host.
import appJs from './assets/app.js' with { type: 'file' }
import avatarSvg from './assets/default-avatar.svg' with { type: 'file' }
import faviconSvg from './assets/favicon.svg' with { type: 'file' }
import styleCss from './assets/style.css' with { type: 'file' }

const FILES: Record<string, { path: string; type: string }> = {
  'app.js': { path: appJs, type: 'text/javascript; charset=utf-8' },
  'style.css': { path: styleCss, type: 'text/css; charset=utf-8' },
  'default-avatar.svg': { path: avatarSvg, type: 'image/svg+xml' },
  'favicon.svg': { path: faviconSvg, type: 'image/svg+xml' },
}

export const ASSETS_PREFIX = '/assets/'
/** An SVG opened by itself is a document of the site's origin: it may run nothing, nor be framed. */
const FILE_HEADERS = {
  'cache-control': 'public, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
}

/**
 * A file under /assets/, read once: its URLs carry the release (layout.ts),
 * so browsers may keep it for a year and fetch it again after an upgrade.
 */
export function assets() {
  const bytes = new Map<string, Promise<Uint8Array>>()
  return (name: string, headers: Record<string, string>): Promise<Response> | undefined => {
    // own names only: `constructor` or `__proto__` is no file
    const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined
    if (!file) return undefined
    let body = bytes.get(name)
    if (!body) bytes.set(name, (body = Bun.file(file.path).bytes()))
    return body.then((b) => new Response(b, { headers: { ...headers, ...FILE_HEADERS, 'content-type': file.type } }))
  }
}
