/**
 * The web app's session: the API's own token, kept in a cookie the page's
 * scripts cannot read (HttpOnly), sent only to this site and on top-level
 * navigations from others (SameSite=Lax), over TLS only when the site is
 * (Secure). Every form that changes something is also checked to come from
 * a page of this site (sameSite): a cross-site POST is refused even from a
 * browser that would send the cookie.
 */

export const SESSION_COOKIE = 'conduit_session'

/**
 * The cookie's name: over TLS `__Host-` prefixed, which browsers accept only
 * from this very host over TLS, so a sibling subdomain cannot plant a session
 * of its choosing (and one planted under the plain name is not read there).
 */
export const sessionCookie = (secure: boolean): string => (secure ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE)

/** The session's token, from the Cookie header: the cookie of the request's scheme (sessionCookie). */
export function sessionToken(request: Request, secure: boolean): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  const name = sessionCookie(secure)
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined
  }
  return undefined
}

/** Whether the site is reached over TLS: the request's own scheme, or the proxy's word for it (TRUST_PROXY). */
export function overTls(request: Request, trustProxy: boolean): boolean {
  if (request.url.startsWith('https:')) return true
  return trustProxy && request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https'
}

/** The Set-Cookie that starts a session for `token`, lasting as long as the token. */
export const startSession = (token: string, maxAgeSeconds: number, secure: boolean): string =>
  `${sessionCookie(secure)}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`

/** The Set-Cookie that ends it. */
export const endSession = (secure: boolean): string =>
  `${sessionCookie(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`

/**
 * Whether a form post comes from a page of this site. Browsers say where a
 * request comes from: `Sec-Fetch-Site` (every current one), else `Origin`,
 * which must name this site's host, over http(s), and over https when the
 * site is known to be (overTls): an http page of the same host is another
 * origin. (Behind a TLS proxy not trusted, the request looks like http, so
 * either scheme is taken.) A request that says neither (not a browser's form)
 * is refused too: the forms are for browsers; programs use the API.
 */
export function sameSite(request: Request, trustProxy: boolean): boolean {
  const site = request.headers.get('sec-fetch-site')
  if (site !== null) return site === 'same-origin'
  const origin = URL.parse(request.headers.get('origin') ?? '')
  if (origin === null || (origin.protocol !== 'http:' && origin.protocol !== 'https:')) return false
  if (origin.host !== URL.parse(request.url)?.host) return false
  return origin.protocol === 'https:' || !overTls(request, trustProxy)
}
