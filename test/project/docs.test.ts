import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, resolve } from 'node:path'
import { skipIf, why } from '../support/skip.ts'

/**
 * The documentation describes this repository and nothing outside it: a user
 * who clones it has only what git tracks. Every Markdown file must not point
 * at the workspace it was written in (`../shared`), and every relative link
 * and every backticked repository path it mentions must exist in the
 * repository (or be something git ignores: a build or benchmark output).
 */

const ROOT = resolve(import.meta.dir, '../..')

function git(...args: string[]) {
  return Bun.spawnSync(['git', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
}

const tracked: string[] = (() => {
  const out = git('ls-files', '-z')
  if (out.exitCode !== 0) throw new Error(`git ls-files failed: ${out.stderr.toString()}`)
  return out.stdout.toString().split('\0').filter(Boolean)
})()
const trackedSet = new Set(tracked)
const topLevelDirs = new Set(tracked.filter((f) => f.includes('/')).map((f) => f.slice(0, f.indexOf('/'))))

/** A repository-relative path (no leading `./`, no trailing `/`), or null when it leaves the repository. */
function inRepo(fromDir: string, target: string): string | null {
  const joined = normalize(join(fromDir, target)).replace(/\/+$/, '')
  if (joined === '.' || joined === '') return ''
  if (joined.startsWith('..') || joined.startsWith('/')) return null
  return joined
}

function exists(path: string): boolean {
  if (path === '') return true
  if (trackedSet.has(path)) return true
  const dir = `${path}/`
  return tracked.some((f) => f.startsWith(dir))
}

/** Untracked paths git ignores are generated (dist/, bench/tmp/): mentioning them is fine. */
function ignored(path: string): boolean {
  // as a file, or as a folder (a pattern like `bench/tmp/` matches folders only)
  return git('check-ignore', '-q', path).exitCode === 0 || git('check-ignore', '-q', `${path}/`).exitCode === 0
}

/** `src/db/migrations/sqlite/NNN_*.sql`: `NNN` stands for a number, `*` for anything. */
function globMatches(pattern: string): boolean {
  const glob = new Bun.Glob(pattern.replace(/NNN/g, '[0-9][0-9][0-9]'))
  return tracked.some((f) => glob.match(f))
}

/** Whether an inline code span names a file or folder of the repository. */
function looksLikeRepoPath(code: string): boolean {
  if (/\s/.test(code) || /^[a-z][a-z0-9+.-]*:/i.test(code) || code.startsWith('/')) return false
  if (code.startsWith('./') || code.startsWith('../')) return true
  if (code.endsWith('.md')) return true
  const slash = code.indexOf('/')
  return slash > 0 && topLevelDirs.has(code.slice(0, slash))
}

/** Everything wrong with one Markdown file's references, as readable lines. */
function problems(file: string, text: string): string[] {
  const found: string[] = []
  for (const banned of ['../shared', 'shared/API.md']) {
    if (text.includes(banned)) found.push(`${file}: mentions ${banned}, which is not in the repository`)
  }
  const dir = dirname(file)
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')

  for (const m of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
    const path = target.replace(/[#?].*$/, '')
    const resolved = path.startsWith('/') ? inRepo('.', path.slice(1)) : inRepo(dir, path)
    if (resolved === null) found.push(`${file}: link to ${target} leaves the repository`)
    else if (!exists(resolved)) found.push(`${file}: link to ${target}, but ${resolved} is not in the repository`)
  }

  for (const m of prose.matchAll(/`([^`\n]+)`/g)) {
    const code = m[1]!
    if (!looksLikeRepoPath(code)) continue
    if (/[*?[]|NNN/.test(code)) {
      if (!globMatches(code.replace(/^\.\//, ''))) found.push(`${file}: \`${code}\` matches no file in the repository`)
      continue
    }
    // docs write paths from the repository root; a bare name may be a sibling of the file
    const candidates = [inRepo('.', code), inRepo(dir, code)].filter((p): p is string => p !== null)
    if (candidates.length === 0) {
      found.push(`${file}: \`${code}\` is outside the repository`)
      continue
    }
    if (!candidates.some((p) => exists(p) || ignored(p))) {
      found.push(`${file}: \`${code}\` is not in the repository`)
    }
  }
  return found
}

const markdown = tracked.filter((f) => f.endsWith('.md'))

skipIf(why.sqlitePass).describe('the documentation', () => {
  test('covers the README, the security notes and the docs folder, API description included', () => {
    expect(markdown).toContain('README.md')
    expect(markdown).toContain('SECURITY.md')
    expect(markdown).toContain('docs/API.md')
    expect(markdown).toContain('docs/DECISIONS.md')
  })

  test('the checker catches what it should (so the next test can fail)', () => {
    const bad = [
      'See `../shared/API.md` and [the contract](../shared/API.md).',
      'Read [missing](docs/NOPE.md), `src/nope.ts`, `bench/nope/` and `src/db/migrations/NNN_*.js`.',
      'A [link out](../../elsewhere.md) and a bare `NOPE.md`.',
    ].join('\n')
    const found = problems('docs/EXAMPLE.md', bad)
    expect(found.filter((p) => p.includes('mentions ../shared'))).toHaveLength(1)
    for (const fragment of [
      '../shared/API.md',
      'docs/NOPE.md',
      '`src/nope.ts`',
      '`bench/nope/`',
      'NNN_*.js',
      'elsewhere.md',
      '`NOPE.md`',
    ]) {
      expect(found.some((p) => p.includes(fragment))).toBe(true)
    }
    const good = [
      'See [decisions](DECISIONS.md#errors), [performance](./PERFORMANCE.md), [home](../README.md), <https://example.com>,',
      '[RealWorld](https://github.com/gothinkster/realworld), `src/app.ts`, `src/db/migrations/sqlite/NNN_*.sql`,',
      '`bench/tmp/` (ignored by git), `/data/conduit.db` (not a repository path) and `conduit --version`.',
      '```sh',
      'cat ../shared/whatever.txt   # inside a code block: still banned, checked above',
      '```',
    ].join('\n')
    expect(problems('docs/EXAMPLE.md', good)).toEqual(['docs/EXAMPLE.md: mentions ../shared, which is not in the repository'])
  })

  for (const file of markdown) {
    test(`${file} refers only to what the repository holds`, () => {
      expect(problems(file, readFileSync(join(ROOT, file), 'utf8'))).toEqual([])
    })
  }
})

skipIf(why.sqlitePass).describe('the README’s first steps', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')

  test('every directory the binary is copied into is created first (mkdir -p)', () => {
    const copies = [...readme.matchAll(/cp dist\/conduit (\S+?)\/?(?=\s|&&|`|$)/g)].map((m) => m[1]!)
    expect(copies.length).toBeGreaterThan(0)
    for (const dir of copies) {
      const at = readme.indexOf(`cp dist/conduit ${dir}`)
      const line = readme.slice(readme.lastIndexOf('\n', at) + 1, at)
      expect({ dir, line }).toEqual({ dir, line: expect.stringContaining(`mkdir -p ${dir}`) })
    }
  })

  test('Bun is installed in a way that works without root, and the README says why', () => {
    const first = readme.slice(0, readme.indexOf('## Example'))
    for (const command of first.matchAll(/^npm install -g .*$/gm)) {
      expect(command[0]).toContain('--prefix ~/.local')
      // --prefix alone would drop the system's npm settings (a site's registry or CA)
      expect(command[0]).toContain('--globalconfig "$(npm config get globalconfig)"')
    }
    expect(first).toMatch(/root|EACCES/)
  })

  test('starts with the two commands: one serves on the embedded default, one runs the whole suite', () => {
    const quick = section('Quick start')
    const block = /```sh\n([\s\S]*?)```/.exec(quick)?.[1] ?? ''
    const commands = block.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'))
    expect(commands).toHaveLength(2)
    expect(commands[0]).toEndWith('bun run start')
    expect(commands[1]).toEndWith('bun run test')
  })

  test('is user documentation: at most 16 KB, the sections a user looks for, in order', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(16 * 1024)
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!)
    const wanted = [
      'Quick start',
      'Example',
      'Configuration',
      'Deploying',
      'PostgreSQL',
      'Scaling out',
      'Backup, restore and upgrade',
      'Operating',
      'Security',
      'Performance',
      'Troubleshooting',
    ]
    expect(headings.filter((h) => wanted.includes(h))).toEqual(wanted)
  })

  test('never speaks of the machine it was written on, runs, steps or commits', () => {
    const banned = [
      /this machine/i,
      /\bin this run\b/i,
      /\bstep \d+/i,
      /not tested here/i,
      /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/,
      /\bcommit\b/i,
    ]
    const lines = readme.split('\n')
    const found = lines.filter((line) => banned.some((re) => re.test(line)))
    expect(found).toEqual([])
  })

  test('the performance summary is one table with its date and machine, and links the details', () => {
    const perf = section('Performance')
    expect(perf.split('\n').filter((l) => /^\|---/.test(l))).toHaveLength(1)
    expect(perf).toMatch(/\b20\d\d-\d\d-\d\d\b/)
    expect(perf).toMatch(/\d+-core/)
    expect(perf).toContain('(docs/PERFORMANCE.md)')
  })

  test('the PostgreSQL example creates the role and the database its URL names', () => {
    const pg = section('PostgreSQL')
    const role = /createuser\b[^\n]*?\s([a-z_][a-z0-9_]*)\s*(?:#|$)/m.exec(pg)?.[1]
    const db = /createdb\b[^\n]*?--owner\s+(\S+)\s+([a-z_][a-z0-9_]*)\s*(?:#|$)/m.exec(pg)
    const url = /postgres:\/\/([^:@/]+)(?::[^@]*)?@[^/]+\/([a-z_][a-z0-9_]*)/.exec(pg)
    expect({ role, owner: db?.[1], database: db?.[2] }).toEqual({ role: url?.[1], owner: url?.[1], database: url?.[2] })
    expect(role).toBeDefined()
  })

  test('deploying shows the systemd unit, Docker and compose with PostgreSQL and several instances', () => {
    const deploying = section('Deploying')
    expect(deploying).toContain('deploy/conduit.service')
    expect(deploying).toContain('systemctl enable')
    expect(deploying).toContain('docker build')
    expect(deploying).toContain('docker compose -f deploy/compose.yml')
  })

  test('every setting the service reads is in the configuration table', () => {
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8')
    const names = [...new Set([...config.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)].map((m) => m[1]!))]
    expect(names.length).toBeGreaterThan(20)
    const table = section('Configuration')
      .split('\n')
      .filter((l) => l.startsWith('|'))
    // a row may name a family once: `LOGIN_THROTTLE`, `..._PER_PAIR`
    const listed = (name: string) =>
      table.some((row) => row.includes(`\`${name}\``)) ||
      table.some((row) => {
        const first = /`([A-Z][A-Z0-9_]*)`/.exec(row)?.[1]
        return first !== undefined && name.startsWith(`${first}_`) && row.includes(`\`..._${name.slice(first.length + 1)}\``)
      })
    expect(names.filter((n) => !listed(n))).toEqual([])
  })

  test('troubleshooting covers npm losing the global configuration under --prefix', () => {
    const trouble = section('Troubleshooting')
    expect(trouble).toContain('--globalconfig')
    expect(trouble).toContain('SELF_SIGNED_CERT_IN_CHAIN')
  })

  test("troubleshooting explains npm 11's allowScripts warning about Bun's postinstall, and what not to do", () => {
    const trouble = section('Troubleshooting')
    expect(trouble).toContain('install scripts not yet covered by allowScripts: bun@1.4.5')
    expect(trouble).toContain('--allow-scripts=bun')
    expect(trouble).toContain('--ignore-scripts')
    expect(trouble).toMatch(/[Hh]armless/)
  })

  test('the binary runs in a directory that cannot be the clone: ~/.local/share/conduit, or /var/lib/conduit as the systemd unit does', () => {
    expect(readFileSync(join(ROOT, 'deploy/conduit.service'), 'utf8')).toContain('WorkingDirectory=/var/lib/conduit')
    for (const file of ['README.md', 'docs/DEPLOYING.md']) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      // where a copy of the binary is started: `cd DIR && .../conduit`
      const dirs = [...text.matchAll(/\bcd (\S+) && \S*conduit\b/g)].map((m) => m[1])
      expect({ file, found: dirs.length > 0 }).toEqual({ file, found: true })
      for (const dir of dirs)
        expect({ file, dir }).toEqual({ file, dir: expect.stringMatching(/^(~\/\.local\/share\/conduit|\/var\/lib\/conduit)$/) })
      // a clone is often ~/conduit: no copy of the binary or its database goes there
      expect({ file, clone: /~\/conduit\b/.test(text) }).toEqual({ file, clone: false })
    }
  })

  test('the restore step removes every file SQLite and the service keep beside the database before copying the backup in', () => {
    const restore = /\*\*Restore\*\*[\s\S]*?(?=\n- \*\*|\n## )/.exec(section('Backup, restore and upgrade'))?.[0] ?? ''
    const command = /`(rm -f [^`]*)`/.exec(restore.replace(/\n\s*/g, ' '))?.[1] ?? ''
    expect(command).toMatch(/^rm -f conduit\.db-wal conduit\.db-shm conduit\.db-changes && cp \S+ conduit\.db$/)
  })

  test('the Example prints one JSON a line, logs in when the user exists, and needs no JavaScript to read a token', () => {
    const example = /```sh\n([\s\S]*?)```/.exec(section('Example'))?.[1] ?? ''
    expect(example).not.toContain('bun -e')
    expect(example).toContain('/users/login')
    // every request whose answer is printed ends it with a newline
    const printed = example.split(/\n(?! )/).filter((c) => c.startsWith('curl '))
    expect(printed.length).toBeGreaterThan(0)
    for (const c of printed) expect(c).toContain(`-w '\\n'`)
  })

  function section(name: string): string {
    const start = readme.indexOf(`\n## ${name}\n`)
    expect(start).toBeGreaterThan(-1)
    const end = readme.indexOf('\n## ', start + 1)
    return readme.slice(start, end === -1 ? undefined : end)
  }
})

skipIf(why.sqlitePass).describe('the changelog', () => {
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const headings = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]!)
  const releases = headings.slice(1).map((h) => /^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(h))
  const newer = (a: string, b: string) => {
    const [x, y] = [a, b].map((v) => v.split('.').map(Number))
    const i = x!.findIndex((n, k) => n !== y![k])
    return i >= 0 && x![i]! > y![i]!
  }

  test('is Keep a Changelog: an Unreleased section, then each release as [x.y.z] - date, newest first', () => {
    expect(changelog).toStartWith('# Changelog\n')
    expect(changelog).toContain('https://keepachangelog.com/en/1.1.0/')
    expect(headings[0]).toBe('[Unreleased]')
    expect(releases.every(Boolean)).toBe(true)
    const versions = releases.map((r) => r![1]!)
    for (let i = 1; i < versions.length; i++)
      expect({ [versions[i - 1]!]: newer(versions[i - 1]!, versions[i]!) }).toEqual({ [versions[i - 1]!]: true })
    const dates = releases.map((r) => r![2]!)
    expect([...dates].sort().reverse()).toEqual(dates)
  })

  test("its newest release is package.json's version, the one conduit --version and the OpenAPI document give", () => {
    expect(releases[0]![1]).toBe(version)
  })

  test('every release says what it changed, under the sections Keep a Changelog names', () => {
    const kinds = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']
    for (const [i, r] of releases.entries()) {
      const start = changelog.indexOf(`\n## ${headings[i + 1]}\n`)
      const end = changelog.indexOf('\n## ', start + 1)
      const sections = [...changelog.slice(start, end < 0 ? undefined : end).matchAll(/^### (.+)$/gm)].map((m) => m[1]!)
      expect({ release: r![1], some: sections.length > 0, unknown: sections.filter((k) => !kinds.includes(k)) }).toEqual({
        release: r![1],
        some: true,
        unknown: [],
      })
    }
  })

  test("the release notes tell clients of RealWorld 2.0's statuses and messages", () => {
    const notes = changelog.slice(changelog.indexOf(`## [${version}]`))
    for (const change of ['`201`', '`409`', "can't be blank", '{"errors":{"credentials":["invalid"]}}', '`403`', '"tagList": null']) {
      expect({ change, noted: notes.includes(change) }).toEqual({ change, noted: true })
    }
  })
})

skipIf(why.sqlitePass).describe('the licence', () => {
  test('LICENSE is the MIT licence of the project, and package.json says so', () => {
    const licence = readFileSync(join(ROOT, 'LICENSE'), 'utf8')
    expect(licence.split('\n')[0]).toBe('MIT License')
    expect(licence).toContain('Copyright (c) 2026 The Conduit on Bun authors')
    expect(licence).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe('MIT')
    expect(trackedSet.has('LICENSE')).toBe(true)
  })
})
