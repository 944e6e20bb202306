import { createHash } from 'node:crypto'
import type { Api, ApiAnswer } from '../api.ts'
import { errorLines, invalidFields } from '../api.ts'
import { type Ctx, type Outcome, redirect, uncacheable } from '../context.ts'
import { kept, seenField, textarea, textareaText } from '../fields.ts'
import { html } from '../html.ts'
import { type Here, profilePath } from '../layout.ts'
import { endSession, startSession } from '../session.ts'
import { errorPage } from './not-found.ts'
import { backTo, errorList, invalidAttrs, NONE_INVALID } from './parts.ts'

interface Deps {
  api: Api
  /** how long a session lasts: the token's lifetime */
  ttlSeconds: number
  /** whether the request came over TLS (the cookie is then Secure) */
  secure(request: Request): boolean
}

/** A form's field; its label shown (`shown`: the settings, whose fields are filled and would say nothing of what they are) or for screen readers only. */
const field = (
  invalid: ReadonlySet<string>,
  name: string,
  type: string,
  placeholder: string,
  label: string,
  value = '',
  autocomplete = '',
  shown = false,
) =>
  html`<fieldset class="form-group"><label class="${shown ? 'form-label' : 'visually-hidden'}" for="${name}">${label}</label><input id="${name}" class="form-control form-control-lg" type="${type}" dir="auto" name="${name}" placeholder="${placeholder}" value="${value}"${autocomplete ? html` autocomplete="${autocomplete}"` : ''}${invalidAttrs(invalid, name)}></fieldset>`

interface Settings {
  image: string | null
  username: string
  bio: string | null
  email: string
}

/** What the settings form showed, as one short digest: the API gives a user no version of its own. */
const versionOf = (u: Settings): string =>
  createHash('sha256')
    .update(JSON.stringify([u.username, u.email, u.bio, u.image]))
    .digest('base64url')
    .slice(0, 22)

/** Sign in, sign up, the settings and signing out: each form through the API, the session in a cookie. */
export function accountPages({ api, ttlSeconds, secure }: Deps) {
  const page = (title: string, here: Here, main: ReturnType<typeof html>, status = 200): Outcome => ({
    kind: 'page',
    status,
    title,
    main,
    here,
  })

  const authForm = (
    signUp: boolean,
    values: { username?: string; email?: string; back?: string },
    errors: readonly string[],
    invalid: ReadonlySet<string> = NONE_INVALID,
  ) =>
    html`<div class="auth-page">
<div class="container page">
<div class="row">
<div class="col-md-6 offset-md-3 col-xs-12">
<h1 class="text-xs-center">${signUp ? 'Sign up' : 'Sign in'}</h1>
<p class="text-xs-center">${signUp ? html`<a href="/login">Have an account?</a>` : html`<a href="/register">Need an account?</a>`}</p>
${errorList(errors)}
<form method="post" novalidate action="${signUp ? '/register' : '/login'}${values.back ? `?back=${encodeURIComponent(values.back)}` : ''}">
${signUp ? field(invalid, 'username', 'text', 'Username', 'Username', values.username, 'username') : html``}
${field(invalid, 'email', 'email', 'Email', 'Email', values.email, 'email')}
${field(invalid, 'password', 'password', 'Password', 'Password', '', signUp ? 'new-password' : 'current-password')}
<button class="btn btn-lg btn-primary pull-xs-right" type="submit">${signUp ? 'Sign up' : 'Sign in'}</button>
</form>
</div>
</div>
</div>
</div>`

  /** A user answer (login, registration, settings): the session starts with its token, then `to`. */
  const signedIn = (ctx: Ctx, res: ApiAnswer, to: string): Outcome =>
    redirect(to, startSession(res.body.user.token as string, ttlSeconds, secure(ctx.request)))

  const settingsForm = (u: Settings, errors: readonly string[], seen?: string, invalid: ReadonlySet<string> = NONE_INVALID) =>
    html`<div class="settings-page">
<div class="container page">
<div class="row">
<div class="col-md-6 offset-md-3 col-xs-12">
<h1 class="text-xs-center">Your Settings</h1>
${errorList(errors)}
<form method="post" novalidate action="/settings">
${seenField(seen)}
<fieldset>
${field(invalid, 'image', 'text', 'URL of profile picture', 'URL of profile picture', u.image ?? '', '', true)}
${field(invalid, 'username', 'text', 'Your Name', 'Username', u.username, 'username', true)}
<fieldset class="form-group"><label class="form-label" for="bio">Short bio about you</label>${textarea(html`id="bio" class="form-control form-control-lg" rows="8" name="bio" placeholder="Short bio about you"${invalidAttrs(invalid, 'bio')}`, u.bio ?? '')}</fieldset>
${field(invalid, 'email', 'email', 'Email', 'Email', u.email, 'email', true)}
${field(invalid, 'password', 'password', 'New Password', 'New password (leave empty to keep it)', '', 'new-password', true)}
<button class="btn btn-lg btn-primary pull-xs-right" type="submit">Update Settings</button>
</fieldset>
</form>
<hr>
<form method="post" action="/logout"><button class="btn btn-outline-danger" type="submit">Or click here to logout.</button></form>
</div>
</div>
</div>
</div>`

  return {
    signIn: async (ctx: Ctx): Promise<Outcome> =>
      ctx.viewer
        ? redirect(backTo(ctx.query, '/'))
        : page('Sign in', 'login', authForm(false, { back: ctx.query.get('back') ?? undefined }, [])),
    signUp: async (ctx: Ctx): Promise<Outcome> => (ctx.viewer ? redirect('/') : page('Sign up', 'register', authForm(true, {}, []))),

    async login(ctx: Ctx): Promise<Outcome> {
      uncacheable(ctx)
      const user = { email: ctx.form.get('email') ?? '', password: ctx.form.get('password') ?? '' }
      const res = await api(ctx.request, 'POST', '/users/login', { body: { user } })
      if (res.status === 200) return signedIn(ctx, res, backTo(ctx.query, '/'))
      return page(
        'Sign in',
        'login',
        authForm(false, { email: user.email, back: ctx.query.get('back') ?? undefined }, errorLines(res), invalidFields(res)),
        res.status,
      )
    },

    async register(ctx: Ctx): Promise<Outcome> {
      uncacheable(ctx)
      const user = {
        username: ctx.form.get('username') ?? '',
        email: ctx.form.get('email') ?? '',
        password: ctx.form.get('password') ?? '',
      }
      const res = await api(ctx.request, 'POST', '/users', { body: { user } })
      if (res.status === 201) return signedIn(ctx, res, '/')
      return page(
        'Sign up',
        'register',
        authForm(true, { username: user.username, email: user.email }, errorLines(res), invalidFields(res)),
        res.status,
      )
    },

    async settings(ctx: Ctx): Promise<Outcome> {
      uncacheable(ctx)
      if (!ctx.token || !ctx.viewer) return redirect('/login')
      const res = await api(ctx.request, 'GET', '/user', { token: ctx.token })
      if (res.status !== 200) return errorPage(ctx, res.status, errorLines(res))
      return page('Settings', 'settings', settingsForm(res.body.user, [], versionOf(res.body.user)))
    },

    async saveSettings(ctx: Ctx): Promise<Outcome> {
      uncacheable(ctx)
      if (!ctx.token || !ctx.viewer) return redirect('/login')
      const f = ctx.form
      // the image and the bio the form showed are the stored ones, which the navbar's user holds (see fields.ts);
      // a username or an email cannot hold a line break
      const user: Record<string, string | null> = {
        image: kept('input', f.get('image') ?? '', ctx.me?.image ?? '') || null,
        username: f.get('username') ?? '',
        bio: kept('textarea', textareaText(f.get('bio') ?? ''), ctx.me?.bio ?? '') || null,
        email: f.get('email') ?? '',
      }
      const shown = { image: user.image ?? null, username: user.username ?? '', bio: user.bio ?? null, email: user.email ?? '' }
      // changed since this page was opened (another tab or device, a client of the API): saving would
      // silently replace that change, so the form comes back first, to be sent again (as the editor does)
      const seen = f.get('seen')
      if (seen !== null) {
        const now = await api(ctx.request, 'GET', '/user', { token: ctx.token })
        if (now.status === 200 && versionOf(now.body.user) !== seen) {
          const changed =
            'settings were changed after this page was opened: update again to replace those changes with what is below (and type a new password again, if any)'
          return page('Settings', 'settings', settingsForm(shown, [changed], versionOf(now.body.user)), 409)
        }
      }
      // an empty password field keeps the password
      const password = f.get('password')
      if (password) user.password = password
      const res = await api(ctx.request, 'PUT', '/user', { token: ctx.token, body: { user }, replacesSession: true })
      if (res.status === 200) return signedIn(ctx, res, profilePath(res.body.user.username))
      return page('Settings', 'settings', settingsForm(shown, errorLines(res), seen ?? undefined, invalidFields(res)), res.status)
    },

    logout: async (ctx: Ctx): Promise<Outcome> => redirect('/', endSession(secure(ctx.request))),
  }
}
