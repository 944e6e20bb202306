import { ADMIN } from '../../auth/actor.ts'
import { passwordHasher } from '../../auth/password.ts'
import { integer } from '../../config.ts'
import type { Store } from '../../db/store.ts'
import { accountDetailsJson, accountJson, accountSearch } from '../../users/accounts.ts'
import { usersOn } from '../../users/index.ts'
import type { Account } from '../../users/store.ts'
import { usernameKey } from '../../names.ts'
import { AccountHasContent } from '../../users/writes.ts'
import { ADMIN_OPTIONS, count, DB_USAGE, found, said, withStore, wrote } from '../admin.ts'
import type { Command, CommandInput } from '../command.ts'
import { CliError, UsageError } from '../errors.ts'
import { passwordProblem, readPassword } from '../password-input.ts'

/** `conduit admin users ...`: accounts, as gitea's `admin user` and Mastodon's `tootctl accounts` do. */

const LIST_DEFAULT = 50
const LIST_MAX = 1000

/** The line for an unknown username (exit status 1). */
const noUser = (input: CommandInput, store: Store, username: string) => `${input.name}: no user "${username}" in ${store.location}`

/**
 * A stored text as the operator's terminal shows it: quoted and escaped (JSON)
 * when it holds a control or format character (a line break in a bio, an
 * escape sequence or a bidi override in an email), which would break the
 * layout or act on the terminal.
 */
const shown = (v: string) =>
  /[\p{Cc}\p{Cf}]/u.test(v)
    ? JSON.stringify(v).replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)
    : v

/** A time to the second, UTC: what an operator reads. */
const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** A command on one account, named by the username after the command's name; `run` gets the open store. */
const onAccount = (
  c: Omit<Command, 'args' | 'options' | 'run'> & { options?: Command['options'] },
  run: (store: Store, username: string, input: CommandInput) => Promise<number>,
  reads = false,
): Command => ({
  options: ADMIN_OPTIONS,
  ...c,
  args: 1,
  run: (input) => withStore(input.config, (store) => run(store, input.args[0]!, input), reads),
})

function table(rows: Account[]): string {
  const cells = [
    ['ID', 'USERNAME', 'EMAIL', 'CREATED', 'LOCKED'],
    ...rows.map((a) => [
      String(a.id),
      shown(a.username),
      shown(a.email),
      when(a.created_at),
      a.locked_at === null ? '-' : when(a.locked_at),
    ]),
  ]
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)))
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')
}

const list: Command = {
  name: 'admin users list',
  usage: `[--search TEXT] [--limit N] [--json] ${DB_USAGE}`,
  summary: [
    `accounts, newest first (${LIST_DEFAULT}, at most ${LIST_MAX}); --search:`,
    'those whose username or email contains TEXT',
    '(any ASCII case); never a password hash',
  ],
  args: 0,
  options: ['search', 'limit', ...ADMIN_OPTIONS],
  run: ({ config, flags }) => {
    const limit = flags.limit === undefined ? LIST_DEFAULT : integer('--limit', flags.limit, 1, LIST_MAX)
    const search = flags.search === undefined ? null : accountSearch(flags.search)
    return withStore(
      config,
      async (store) => {
        const rows = await usersOn(store).sql.accounts(search, limit)
        return said(flags, rows.length ? table(rows) : 'no accounts', { users: rows.map(accountJson) })
      },
      true,
    )
  },
}

const show = onAccount(
  {
    name: 'admin users show',
    usage: `USERNAME [--json] ${DB_USAGE}`,
    summary: ['one account: its fields, whether it is locked, and how', 'many articles, comments, favorites, followers, followees'],
  },
  async (store, username, input) => {
    const a = await usersOn(store).sql.account(usernameKey(username))
    if (!a) throw new CliError(noUser(input, store, username))
    const fields: [string, string | number | null][] = [
      ['id', a.id],
      ['username', shown(a.username)],
      ['email', shown(a.email)],
      ['bio', a.bio && shown(a.bio)],
      ['image', a.image && shown(a.image)],
      ['created', when(a.created_at)],
      ['locked', a.locked_at === null ? 'no' : `since ${when(a.locked_at)}`],
      ['articles', a.articles],
      ['comments', a.comments],
      ['favorites', a.favorites],
      ['followers', a.followers],
      ['following', a.following],
    ]
    const text = fields.map(([k, v]) => `${k.padEnd(11)}${v ?? '-'}`).join('\n')
    return said(input.flags, text, { user: accountDetailsJson(a) })
  },
  true,
)

const password = onAccount(
  {
    name: 'admin users password',
    usage: `USERNAME [--json] ${DB_USAGE}`,
    summary: [
      "set the account's password, read from standard input",
      '(one line; registration rules); every token issued',
      'before is refused',
    ],
  },
  async (store, username, input) => {
    // asked for only once the account is known to exist
    if (!(await usersOn(store).sql.account(usernameKey(username)))) throw new CliError(noUser(input, store, username))
    const clear = await readPassword(input.name, `New password for ${username}: `)
    const problem = passwordProblem(clear)
    if (problem) throw new UsageError(`${input.name}: ${problem}; nothing changed`)
    const hash = await passwordHasher(input.config.passwordHash).hash(clear)
    const a = await found(() => usersOn(store).writes.setPassword(ADMIN, username, hash), noUser(input, store, username))
    return wrote(input.flags, store, `changed the password of ${a.username}; every token issued before is refused`, {
      username: a.username,
      passwordChanged: true,
    })
  },
)

const locking = (locked: boolean): Command =>
  onAccount(
    {
      name: `admin users ${locked ? 'lock' : 'unlock'}`,
      usage: `USERNAME [--json] ${DB_USAGE}`,
      summary: locked
        ? ["refuse the account's logins (403) and tokens (401) at", 'once; what it wrote stays readable']
        : ['let a locked account log in again (tokens issued', 'before the lock stay refused)'],
    },
    async (store, username, input) => {
      const a = await found(() => usersOn(store).writes.setLocked(ADMIN, username, locked), noUser(input, store, username))
      const text = locked
        ? a.changed
          ? `locked ${a.username}: its logins and every token issued before are refused`
          : `${a.username} was locked already`
        : a.changed
          ? `unlocked ${a.username}: it may log in again`
          : `${a.username} was not locked`
      return wrote(input.flags, store, text, { username: a.username, locked, changed: a.changed })
    },
  )

const remove = onAccount(
  {
    name: 'admin users delete',
    usage: `USERNAME [--with-content] [--json] ${DB_USAGE}`,
    options: ['with-content', ...ADMIN_OPTIONS],
    summary: [
      'delete an account; refused when it wrote articles or',
      'comments, unless --with-content: then with them, and',
      'with its favorites and follows',
    ],
  },
  async (store, username, input) => {
    const withContent = input.flags['with-content'] === true
    const d = await found(() => usersOn(store).writes.delete(ADMIN, username, withContent), noUser(input, store, username)).catch((e) => {
      if (!(e instanceof AccountHasContent)) throw e
      throw new UsageError(
        `${input.name}: ${e.username} wrote ${count(e.articles, 'article')} and ${count(e.comments, 'comment')}; nothing deleted: add --with-content to delete them with the account`,
      )
    })
    const gone = `${count(d.articles, 'article')}, ${count(d.comments, 'comment')}, ${count(d.favorites, 'favorite')} and ${count(d.follows, 'follow')}`
    const { articles, comments, favorites, follows } = d
    return wrote(input.flags, store, `deleted the account ${d.username}, with ${gone}`, {
      username: d.username,
      deleted: true,
      articles,
      comments,
      favorites,
      follows,
    })
  },
)

export const adminUserCommands: Command[] = [list, show, password, locking(true), locking(false), remove]
