import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { onPostgres } from '../support/backend.ts'
import { redactUrl } from '../../src/config.ts'
import { skipIf, why } from '../support/skip.ts'
import {
  api,
  expectReadAsAnyone,
  newCredentials,
  register,
  run,
  runCli,
  type Server,
  startServer,
  tempDir,
  twoInstances,
  useBinary,
} from './support.ts'

/**
 * `conduit admin ...` through the compiled binary, against running instances
 * whose caches are warm: each command goes through the same write policies
 * and change log as the API, so the very next request to EVERY instance
 * (two on one database; on SQLite also the workers of `serve --workers 2`)
 * answers with it applied. Then each command's failures: one line, exit 1 for
 * what does not exist, 2 for a bad command line or a refused input.
 */
const binary = useBinary()
const BACKEND = onPostgres ? 'PostgreSQL' : 'SQLite'

const article = (title: string, tagList: string[] = []) => ({ article: { title, description: 'd', body: 'b', tagList } })
const login = (url: string, u: { email: string }, password: string) =>
  api(url, 'POST', '/api/users/login', { body: { user: { email: u.email, password } } })

describe(`conduit admin against two warm instances on one ${BACKEND} database`, () => {
  let a: Server
  let b: Server
  let database: string
  beforeAll(async () => {
    ;({ a, b, database } = await twoInstances(binary()))
  }, 60_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
  })

  const admin = (args: string[], stdin?: string) => runCli(binary(), ['admin', ...args, '--db', database], { stdin })
  /** The command succeeded with exactly this one line on stdout and nothing on stderr. */
  const said = async (args: string[], line: string, stdin?: string) => {
    const r = await admin(args, stdin)
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `${line}\n`, stderr: '' })
  }
  /** A change's line ends with the database it changed (the password's URL, none here, redacted). */
  const wrote = (args: string[], line: string, stdin?: string) =>
    said(args, `${line} (in ${onPostgres ? redactUrl(database) : database})`, stdin)
  /** GETs `path` on both instances, `times` each: their caches hold it. */
  const warm = async (path: string, token?: string, times = 2) => {
    for (const s of [a, b]) for (let i = 0; i < times; i++) expect((await api(s.url, 'GET', path, { token })).status).toBe(200)
  }
  const each = async (check: (s: Server) => Promise<void>) => {
    for (const s of [a, b]) await check(s)
  }

  test('articles delete and comments delete: the next read on each instance is without them', async () => {
    const [author, reader] = [await register(a.url), await register(b.url)]
    const tag = `t${Date.now().toString(36)}`
    const keep = (await api(a.url, 'POST', '/api/articles', { token: author.token, body: article(`Keep ${tag}`, [tag]) })).body.article
    const spam = (await api(b.url, 'POST', '/api/articles', { token: author.token, body: article(`Spam ${tag}`, [tag]) })).body.article
    const comments = `/api/articles/${keep.slug}/comments`
    const c1 = (await api(a.url, 'POST', comments, { token: reader.token, body: { comment: { body: 'one' } } })).body.comment
    const c2 = (await api(b.url, 'POST', comments, { token: reader.token, body: { comment: { body: 'two' } } })).body.comment
    for (const p of [`/api/articles/${spam.slug}`, `/api/articles?tag=${tag}`, '/api/articles', comments]) await warm(p, reader.token)
    await warm(`/api/articles/${spam.slug}`)

    await wrote(['articles', 'delete', spam.slug], `deleted the article ${spam.slug} with its comments and favorites`)
    await each(async (s) => {
      expect((await api(s.url, 'GET', `/api/articles/${spam.slug}`)).status).toBe(404)
      expect((await api(s.url, 'GET', `/api/articles/${spam.slug}`, { token: reader.token })).status).toBe(404)
      const tagged = await api(s.url, 'GET', `/api/articles?tag=${tag}`, { token: reader.token })
      expect(tagged.body.articles.map((x: { slug: string }) => x.slug)).toEqual([keep.slug])
      expect(tagged.body.articlesCount).toBe(1)
    })

    await said(['comments', 'delete', String(c1.id), '--json'], JSON.stringify({ id: c1.id, article: keep.slug, deleted: true }))
    await each(async (s) => {
      const list = await api(s.url, 'GET', comments, { token: reader.token })
      expect(list.body.comments.map((c: { id: number }) => c.id)).toEqual([c2.id])
    })

    await said(['articles', 'delete', keep.slug, '--json'], JSON.stringify({ slug: keep.slug, deleted: true }))
    await each(async (s) => {
      expect((await api(s.url, 'GET', `/api/articles/${keep.slug}`, { token: reader.token })).status).toBe(404)
      expect((await api(s.url, 'GET', comments, { token: reader.token })).status).toBe(404)
      expect((await api(s.url, 'GET', `/api/articles?tag=${tag}`)).body.articlesCount).toBe(0)
    })
  }, 60_000)

  test('users lock: tokens refused on each instance at once (401, or read as none), login 403 after the right password only; unlock', async () => {
    const lou = await register(a.url)
    const made = await api(a.url, 'POST', '/api/articles', { token: lou.token, body: article(`By lou ${Date.now()}`) })
    // lou's view of it differs from anyone's
    await api(a.url, 'POST', `/api/articles/${made.body.article.slug}/favorite`, { token: lou.token })
    await warm('/api/user', lou.token, 3)
    await warm(`/api/articles/${made.body.article.slug}`, lou.token)

    await wrote(['users', 'lock', lou.username], `locked ${lou.username}: its logins and every token issued before are refused`)
    await each(async (s) => {
      expect((await api(s.url, 'GET', '/api/user', { token: lou.token })).status).toBe(401)
      await expectReadAsAnyone(s.url, `/api/articles/${made.body.article.slug}`, lou.token)
      // what it wrote stays
      expect((await api(s.url, 'GET', `/api/articles/${made.body.article.slug}`)).body.article.author.username).toBe(lou.username)
      const right = await login(s.url, lou, lou.password)
      expect({ status: right.status, body: right.body }).toEqual({ status: 403, body: { errors: { account: ['is locked'] } } })
      expect((await login(s.url, lou, `${lou.password}x`)).status).toBe(401)
    })
    await said(['users', 'lock', lou.username, '--json'], JSON.stringify({ username: lou.username, locked: true, changed: false }))

    await wrote(['users', 'unlock', lou.username], `unlocked ${lou.username}: it may log in again`)
    await said(['users', 'unlock', lou.username, '--json'], JSON.stringify({ username: lou.username, locked: false, changed: false }))
    await each(async (s) => {
      const again = await login(s.url, lou, lou.password)
      expect(again.status).toBe(200)
      expect((await api(s.url, 'GET', '/api/user', { token: again.body.user.token })).status).toBe(200)
      // tokens from before the lock stay refused
      expect((await api(s.url, 'GET', '/api/user', { token: lou.token })).status).toBe(401)
    })
  }, 60_000)

  test('users password (from standard input): old tokens 401 on each instance, the new password logs in, the old one not', async () => {
    const pat = await register(b.url)
    await warm('/api/user', pat.token, 3)
    await wrote(
      ['users', 'password', pat.username],
      `changed the password of ${pat.username}; every token issued before is refused`,
      'a new password\n',
    )
    await each(async (s) => {
      expect((await api(s.url, 'GET', '/api/user', { token: pat.token })).status).toBe(401)
      expect((await login(s.url, pat, pat.password)).status).toBe(401)
      const fresh = await login(s.url, pat, 'a new password')
      expect(fresh.status).toBe(200)
      expect((await api(s.url, 'GET', '/api/user', { token: fresh.body.user.token })).status).toBe(200)
    })
    const second = (await login(a.url, pat, 'a new password')).body.user.token as string
    await warm('/api/user', second, 3)
    await said(
      ['users', 'password', pat.username, '--json'],
      JSON.stringify({ username: pat.username, passwordChanged: true }),
      'a third password\n',
    )
    await each(async (s) => {
      expect((await api(s.url, 'GET', '/api/user', { token: second })).status).toBe(401)
      expect((await login(s.url, pat, 'a new password')).status).toBe(401)
      expect((await login(s.url, pat, 'a third password')).status).toBe(200)
    })
  }, 60_000)

  test("the token a user's own password change kept is signed out by an operator's reset, and by a lock", async () => {
    for (const action of ['password', 'lock'] as const) {
      const kim = await register(a.url)
      const changed = await api(b.url, 'PUT', '/api/user', { token: kim.token, body: { user: { password: 'kims new password' } } })
      expect(changed.status).toBe(200)
      // the sender and the answer's token both work, on each instance
      for (const token of [kim.token, changed.body.user.token]) await warm('/api/user', token)
      if (action === 'password') await admin(['users', 'password', kim.username], 'an operators password\n')
      else await admin(['users', 'lock', kim.username])
      await each(async (s) => {
        for (const token of [kim.token, changed.body.user.token])
          expect({ action, status: (await api(s.url, 'GET', '/api/user', { token })).status }).toEqual({ action, status: 401 })
      })
    }
  }, 60_000)

  test('users delete: refused for an author without --with-content (nothing deleted); with it, gone from every answer, every count corrected', async () => {
    const [spammer, fan] = [await register(a.url), await register(b.url)]
    const tag = `s${Date.now().toString(36)}`
    const made = (await api(a.url, 'POST', '/api/articles', { token: spammer.token, body: article(`Buy ${tag}`, [tag]) })).body.article
    const fans = (await api(b.url, 'POST', '/api/articles', { token: fan.token, body: article(`Real ${tag}`) })).body.article
    const fanComments = `/api/articles/${fans.slug}/comments`
    expect((await api(b.url, 'POST', `/api/articles/${made.slug}/favorite`, { token: fan.token })).status).toBe(200)
    expect((await api(b.url, 'POST', `/api/profiles/${spammer.username}/follow`, { token: fan.token })).status).toBe(200)
    // what the spammer did to others: a favorite, a follow, two comments
    expect((await api(a.url, 'POST', `/api/articles/${fans.slug}/favorite`, { token: spammer.token })).status).toBe(200)
    expect((await api(a.url, 'POST', `/api/profiles/${fan.username}/follow`, { token: spammer.token })).status).toBe(200)
    for (const body of ['cheap', 'watches'])
      expect((await api(a.url, 'POST', fanComments, { token: spammer.token, body: { comment: { body } } })).status).toBe(201)
    const own = (await api(b.url, 'POST', fanComments, { token: fan.token, body: { comment: { body: 'mine' } } })).body.comment
    const watched = [
      '/api/articles',
      '/api/tags',
      `/api/articles/${made.slug}`,
      `/api/articles/${fans.slug}`,
      fanComments,
      `/api/profiles/${spammer.username}`,
      `/api/articles?author=${fan.username}`,
      '/api/articles/feed',
    ]
    for (const p of watched) await warm(p, fan.token)
    await warm(`/api/articles/${fans.slug}`)
    await warm('/api/user', spammer.token)
    expect((await api(a.url, 'GET', `/api/articles/${fans.slug}`)).body.article.favoritesCount).toBe(1)
    const before = (await api(a.url, 'GET', '/api/articles')).body.articlesCount as number

    const refused = await admin(['users', 'delete', spammer.username])
    expect(refused).toMatchObject({ code: 2, stdout: '' })
    expect(refused.stderr).toBe(
      `conduit: admin users delete: ${spammer.username} wrote 1 article and 2 comments; nothing deleted: add --with-content to delete them with the account\n`,
    )
    await each(async (s) => {
      expect((await api(s.url, 'GET', `/api/articles/${made.slug}`)).status).toBe(200)
      expect((await api(s.url, 'GET', fanComments, { token: fan.token })).body.comments).toHaveLength(3)
      expect((await api(s.url, 'GET', '/api/user', { token: spammer.token })).status).toBe(200)
    })

    await said(
      ['users', 'delete', spammer.username, '--with-content', '--json'],
      JSON.stringify({ username: spammer.username, deleted: true, articles: 1, comments: 2, favorites: 1, follows: 2 }),
    )
    await each(async (s) => {
      expect((await api(s.url, 'GET', `/api/articles/${made.slug}`, { token: fan.token })).status).toBe(404)
      expect((await api(s.url, 'GET', `/api/profiles/${spammer.username}`, { token: fan.token })).status).toBe(404)
      expect((await api(s.url, 'GET', '/api/articles', { token: fan.token })).body.articlesCount).toBe(before - 1)
      expect((await api(s.url, 'GET', '/api/tags', { token: fan.token })).body.tags).not.toContain(tag)
      expect((await api(s.url, 'GET', '/api/articles/feed', { token: fan.token })).body.articlesCount).toBe(0)
      // the fan's article: the spammer's favorite and comments gone, counted as such, anonymous or signed in
      for (const token of [undefined, fan.token]) {
        expect((await api(s.url, 'GET', `/api/articles/${fans.slug}`, { token })).body.article.favoritesCount).toBe(0)
        const listed = (await api(s.url, 'GET', `/api/articles?author=${fan.username}`, { token })).body.articles
        expect(listed.map((x: { favoritesCount: number }) => x.favoritesCount)).toEqual([0])
      }
      const left = (await api(s.url, 'GET', fanComments, { token: fan.token })).body.comments
      expect(left.map((c: { id: number }) => c.id)).toEqual([own.id])
      expect((await api(s.url, 'GET', '/api/user', { token: spammer.token })).status).toBe(401)
    })

    // an account that wrote nothing goes without the flag; the line says what went with it
    const quiet = await register(b.url)
    expect((await api(b.url, 'POST', `/api/profiles/${fan.username}/follow`, { token: quiet.token })).status).toBe(200)
    await wrote(
      ['users', 'delete', quiet.username],
      `deleted the account ${quiet.username}, with 0 articles, 0 comments, 0 favorites and 1 follow`,
    )
    await each(async (s) => expect((await api(s.url, 'GET', `/api/profiles/${quiet.username}`)).status).toBe(404))
  }, 60_000)

  test('users list and users show: what an operator reads, never a password hash', async () => {
    const name = `Zed${Date.now().toString(36)}`
    const zed = await register(a.url, { ...newCredentials(), username: name, email: `${name.toLowerCase()}@example.org` })
    await api(a.url, 'POST', '/api/articles', { token: zed.token, body: article(`Zed ${name}`) })
    // a bio that would break the layout or act on the terminal shows escaped
    await api(a.url, 'PUT', '/api/user', { token: zed.token, body: { user: { bio: 'one\ntwo \u001b[31mred \u202eevil' } } })

    const listed = await admin(['users', 'list', '--search', name.toUpperCase()])
    expect(listed.code).toBe(0)
    const lines = listed.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID +USERNAME +EMAIL +CREATED +LOCKED$/)
    expect(lines).toHaveLength(2)
    expect(lines[1]).toMatch(new RegExp(`^\\d+ +${name} +${zed.email} +\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ +-$`))

    const json = await admin(['users', 'list', '--search', '@EXAMPLE.ORG', '--json', '--limit', '5'])
    expect(json.stdout.trimEnd().split('\n')).toHaveLength(1)
    const users = JSON.parse(json.stdout).users
    expect(users.map((u: { username: string }) => u.username)).toEqual([name])
    expect(Object.keys(users[0]).sort()).toEqual(['bio', 'createdAt', 'email', 'id', 'image', 'locked', 'lockedAt', 'username'])

    const shown = await admin(['users', 'show', name.toLowerCase(), '--json'])
    expect(JSON.parse(shown.stdout).user).toMatchObject({ username: name, email: zed.email, locked: false, articles: 1, comments: 0 })
    const text = await admin(['users', 'show', name])
    expect(text.stdout).toContain(`username   ${name}\n`)
    expect(text.stdout).toContain('articles   1\n')
    expect(text.stdout).toContain('bio        "one\\ntwo \\u001b[31mred \\u202eevil"\n')
    for (const out of [listed.stdout, json.stdout, shown.stdout, text.stdout]) expect(out).not.toContain('$argon2')
  }, 60_000)

  test('failures: one line each; exit 1 for an unknown user, slug or id, 2 for a usage error or a refused password', async () => {
    const user = await register(a.url)
    await warm('/api/user', user.token)
    const where = onPostgres ? '' : ` in ${database}`
    const failures: [string[], number, string][] = [
      [['users', 'show', 'nobody-here'], 1, `admin users show: no user "nobody-here"${where}`],
      [['users', 'lock', 'nobody-here'], 1, `admin users lock: no user "nobody-here"${where}`],
      [['users', 'unlock', 'nobody-here'], 1, `admin users unlock: no user "nobody-here"${where}`],
      [['users', 'password', 'nobody-here'], 1, `admin users password: no user "nobody-here"${where}`],
      [['users', 'delete', 'nobody-here', '--with-content'], 1, `admin users delete: no user "nobody-here"${where}`],
      [['articles', 'delete', 'no-such-article'], 1, `admin articles delete: no article "no-such-article"${where}`],
      [['comments', 'delete', '987654321'], 1, `admin comments delete: no comment 987654321${where}`],
      [['comments', 'delete', 'x1'], 2, 'admin comments delete: a comment id is a positive whole number, got "x1"'],
      [['comments', 'delete', '-1'], 2, 'admin comments delete: a comment id is a positive whole number, got "-1"'],
      // a whole number, larger than any id: no such comment, said as typed
      [['comments', 'delete', '99999999999999999'], 1, `admin comments delete: no comment 99999999999999999${where}`],
      [['comments', 'delete', '3000000000'], 1, `admin comments delete: no comment 3000000000${where}`],
      [
        ['users', 'list', '--limit', '1', '--workers', '0'],
        2,
        'admin users list does not take --workers; see conduit admin users list --help',
      ],
      [
        ['users', 'show', user.username, '--with-content'],
        2,
        'admin users show does not take --with-content; see conduit admin users show --help',
      ],
      [['users', 'lock'], 2, 'usage: conduit admin users lock USERNAME [--json] [--db FILE|URL]; see conduit --help'],
      [['users', 'show', 'a', 'b'], 2, 'usage: conduit admin users show USERNAME [--json] [--db FILE|URL]; see conduit --help'],
      [['articles', 'delete'], 2, 'usage: conduit admin articles delete SLUG [--json] [--db FILE|URL]; see conduit --help'],
      [['comments', 'delete'], 2, 'usage: conduit admin comments delete ID [--json] [--db FILE|URL]; see conduit --help'],
      [['users', 'list', '--limit', '0'], 2, '--limit must be between 1 and 1000, got 0'],
      [
        ['users'],
        2,
        'admin users needs a command: conduit admin users list | show | password | lock | unlock | delete; see conduit --help',
      ],
    ]
    for (const [args, code, line] of failures) {
      const r = await admin(args)
      // on PostgreSQL the message names the URL without its password: only its start is compared
      const stderr = onPostgres ? r.stderr.replace(/ in postgres(ql)?:\/\/\S+$/m, '') : r.stderr
      expect({ args, code: r.code, stdout: r.stdout, stderr }).toEqual({ args, code, stdout: '', stderr: `conduit: ${line}\n` })
    }

    // a password refused by registration's rules: the API's message, nothing changed
    for (const [input, problem] of [
      ['short\n', 'password is too short (minimum is 8 characters)'],
      [`${'x'.repeat(257)}\n`, 'password is too long (maximum is 256 characters)'],
      ['two\nlines here\n', 'the password on standard input must be one line'],
    ] as const) {
      const r = await admin(['users', 'password', user.username], input)
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' })
      expect(r.stderr).toEndWith(`${problem}; nothing changed\n`)
      expect(r.stderr.split('\n')).toHaveLength(2)
    }
    for (const s of [a, b]) expect((await api(s.url, 'GET', '/api/user', { token: user.token })).status).toBe(200)
    expect((await login(a.url, user, user.password)).status).toBe(200)
  }, 60_000)
})

describe('conduit --help', () => {
  test('lists every admin command with its arguments', async () => {
    const help = (await runCli(binary(), ['--help'])).stdout
    for (const line of [
      'conduit admin users list [--search TEXT] [--limit N] [--json] [--db FILE|URL]',
      'conduit admin users show USERNAME [--json] [--db FILE|URL]',
      'conduit admin users password USERNAME [--json] [--db FILE|URL]',
      'conduit admin users lock USERNAME [--json] [--db FILE|URL]',
      'conduit admin users unlock USERNAME [--json] [--db FILE|URL]',
      'conduit admin users delete USERNAME [--with-content] [--json] [--db FILE|URL]',
      'conduit admin articles delete SLUG [--json] [--db FILE|URL]',
      'conduit admin comments delete ID [--json] [--db FILE|URL]',
    ]) {
      expect(help).toContain(`  ${line}`)
    }
  })

  test('help for one command or group: conduit help admin is conduit admin --help, exit 0', async () => {
    const [viaHelp, viaFlag] = await Promise.all([
      runCli(binary(), ['help', 'admin', 'users']),
      runCli(binary(), ['admin', 'users', '--help']),
    ])
    expect(viaHelp).toEqual(viaFlag)
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toContain('  conduit admin users delete USERNAME [--with-content] [--json] [--db FILE|URL]')
    expect(viaHelp.stdout).not.toContain('conduit admin articles')
  })
})

skipIf(why.sqliteOnly).describe('conduit admin against serve --workers 2 (SQLite)', () => {
  /** A GET on a fresh connection: the kernel spreads those over both workers. */
  const fresh = async (url: string, token?: string) => {
    const headers: Record<string, string> = { connection: 'close' }
    if (token) headers.authorization = `Token ${token}`
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) })
    await res.arrayBuffer()
    return res.status
  }
  /** `n` fresh-connection GETs: the statuses seen (all of them the same, on both workers, or the test says which). */
  const statuses = async (n: number, url: string, token?: string) => {
    const seen = new Set<number>()
    for (let i = 0; i < n; i++) seen.add(await fresh(url, token))
    return [...seen]
  }

  test('every command that writes: the next request to either worker answers it', async () => {
    const dir = tempDir()
    const file = join(dir, 'workers.db')
    const server = await startServer(binary(), {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_PATH: file },
      args: ['serve', '--workers', '2'],
    })
    try {
      const [lou, reader] = [await register(server.url), await register(server.url)]
      const made = await api(server.url, 'POST', '/api/articles', { token: reader.token, body: article(`Workers ${Date.now()}`) })
      const articleUrl = `${server.url}/api/articles/${made.body.article.slug}`
      // 24 fresh connections each: both workers verify the token and cache the article (a miss has odds of 2^-23)
      expect(await statuses(24, `${server.url}/api/user`, lou.token)).toEqual([200])
      expect(await statuses(24, articleUrl)).toEqual([200])

      const locked = await runCli(binary(), ['admin', 'users', 'lock', lou.username, '--db', file])
      expect(locked).toMatchObject({ code: 0, stderr: '' })
      expect(await statuses(24, `${server.url}/api/user`, lou.token)).toEqual([401])

      const admin = async (args: string[], stdin?: string) =>
        expect(await runCli(binary(), ['admin', ...args, '--db', file], { stdin })).toMatchObject({ code: 0, stderr: '' })
      await admin(['users', 'unlock', lou.username])
      const again = await login(server.url, lou, lou.password)
      expect(again.status).toBe(200)
      expect(await statuses(24, `${server.url}/api/user`, again.body.user.token)).toEqual([200])
      await admin(['users', 'password', lou.username], 'another password\n')
      expect(await statuses(24, `${server.url}/api/user`, again.body.user.token)).toEqual([401])

      const commentsUrl = `${articleUrl}/comments`
      const comment = await api(server.url, 'POST', `/api/articles/${made.body.article.slug}/comments`, {
        token: reader.token,
        body: { comment: { body: 'hi' } },
      })
      expect(comment.status).toBe(201)
      const count = async () => {
        const seen = new Set<number>()
        for (let i = 0; i < 24; i++) {
          const res = await fetch(commentsUrl, { headers: { connection: 'close' }, signal: AbortSignal.timeout(5_000) })
          seen.add(((await res.json()) as { comments: unknown[] }).comments.length)
        }
        return [...seen]
      }
      expect(await count()).toEqual([1])
      await admin(['comments', 'delete', String(comment.body.comment.id)])
      expect(await count()).toEqual([0])

      const profileUrl = `${server.url}/api/profiles/${lou.username}`
      expect(await statuses(24, profileUrl)).toEqual([200])
      await admin(['users', 'delete', lou.username])
      expect(await statuses(24, profileUrl)).toEqual([404])

      await admin(['articles', 'delete', made.body.article.slug])
      expect(await statuses(24, articleUrl)).toEqual([404])
    } finally {
      await server.stop()
    }
  }, 60_000)
})

describe('conduit admin users password from a terminal', () => {
  const script = Bun.which('script')
  skipIf(!script && 'util-linux script missing').test(
    'asks twice without echo, one line each (util-linux script gives it a terminal); two different lines change nothing',
    async () => {
      const dir = tempDir()
      const file = join(dir, 'tty.db')
      const server = await startServer(binary(), { env: { HOST: '127.0.0.1', LOG_LEVEL: 'error', DATABASE_PATH: file } })
      try {
        const user = await register(server.url)
        const command = `${binary()} admin users password ${user.username} --db ${file}`
        // each typed line arrives after its prompt, as a person's would
        const typing = (first: string, second: string, env = '') =>
          run(
            ['sh', '-c', `(sleep 1; printf '${first}\\n'; sleep 1; printf '${second}\\n') | ${script} -qec '${env}${command}' /dev/null`],
            { timeoutMs: 20_000 },
          )
        const differ = await typing('typed at a terminal', 'typed at a terminai')
        expect(differ.code).toBe(2)
        expect(differ.stdout).toContain(`New password for ${user.username}: `)
        expect(differ.stdout).toContain('The same again: ')
        expect(differ.stdout).toContain('admin users password: the two passwords typed differ; nothing changed')
        expect((await login(server.url, user, user.password)).status).toBe(200)
        const same = await typing('typed at a terminal', 'typed at a terminal')
        expect(same.code).toBe(0)
        expect(same.stdout).toContain(`changed the password of ${user.username}`)
        for (const r of [differ, same]) expect(r.stdout).not.toContain('typed at a termina')
        expect((await login(server.url, user, 'typed at a terminal')).status).toBe(200)
        // Ctrl-D (end of input) at either prompt: the command stops there, one line, nothing changed
        const ends: [string, string][] = [
          ['\\004', ''],
          ['typed at a terminal', '\\004'],
        ]
        for (const [first, second] of ends) {
          const cancelled = await typing(first, second)
          expect({ first, code: cancelled.code }).toEqual({ first, code: 1 })
          expect(cancelled.stdout).toContain('admin users password: no password typed (end of input); nothing changed')
          expect(cancelled.stdout).not.toContain(first === '\\004' ? 'The same again' : 'differ')
        }
        expect((await login(server.url, user, 'typed at a terminal')).status).toBe(200)
        // Backspace and Ctrl-U edit what is typed, as at any prompt; arrows and Home (escape sequences) add nothing
        const edited = await typing('typed at a terminalXY\\177\\177 now', 'wrong\\025typed at a\\033[D\\033[C terminal\\033OH now')
        expect(edited.code).toBe(0)
        expect((await login(server.url, user, 'typed at a terminal now')).status).toBe(200)
        // no stty on the machine (the Docker image has none): still not shown
        const bare = await typing('typed without stty', 'typed without stty', 'env PATH=/nonexistent ')
        expect(bare.code).toBe(0)
        expect(bare.stdout).not.toContain('typed without stty')
        expect((await login(server.url, user, 'typed without stty')).status).toBe(200)
      } finally {
        await server.stop()
      }
    },
    60_000,
  )
})
