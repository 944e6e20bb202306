import { expect, test } from 'bun:test'
import { ConfigError, defaults, environment, integer, loadConfig, misspelledVariables, redactUrl } from '../../src/config.ts'
import { skipIf, why } from '../support/skip.ts'

const SECRET_32 = 's'.repeat(32)

skipIf(why.sqlitePass).describe('loadConfig', () => {
  test('gives the defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual(defaults)
  })

  test('has the documented defaults', () => {
    const c = loadConfig({})
    expect(c.port).toBe(3000)
    expect(c.jwtSecret).toBeUndefined()
    expect(c.tokenTtlSeconds).toBe(30 * 24 * 3600)
    expect(c.corsOrigins).toBe('*')
    expect(c.bodyLimitBytes).toBe(1024 * 1024)
  })

  test('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', JWT_SECRET: '', CORS_ORIGINS: '', BODY_LIMIT_BYTES: '', LOG_LEVEL: '' })).toEqual(defaults)
  })

  test('ignores variables it does not know', () => {
    expect(loadConfig({ SOMETHING_ELSE: '42', PATH: '/usr/bin' })).toEqual(defaults)
  })

  test('returns a fresh value each time and never changes the defaults', () => {
    const a = loadConfig({ LOGIN_THROTTLE_PER_PAIR: '3', CORS_ORIGINS: 'https://a.example' })
    a.passwordHash.memoryCost = 1
    const b = loadConfig({})
    expect(b).toEqual(defaults)
    expect(b).not.toBe(defaults)
    expect(b.loginThrottle).not.toBe(defaults.loginThrottle)
    expect(defaults.loginThrottle.perPair).toBe(10)
    expect(defaults.passwordHash.memoryCost).toBe(19456)
    expect(defaults.corsOrigins).toBe('*')
  })

  test('reads every variable it documents', () => {
    const env = {
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgresql://app:secret@db.internal:6432/conduit?sslmode=require',
      DATABASE_PATH: '/data/conduit.db',
      DATABASE_POOL_MAX: '25',
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_TIMEOUT_SECONDS: '2',
      JWT_SECRET: SECRET_32,
      JWT_TTL_SECONDS: '3600',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      BODY_LIMIT_BYTES: '2048',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
      TRUST_PROXY: 'true',
      LOGIN_THROTTLE: 'false',
      LOGIN_THROTTLE_PER_PAIR: '5',
      LOGIN_THROTTLE_PER_ACCOUNT: '50',
      LOGIN_THROTTLE_PER_ADDRESS: '30',
      LOGIN_THROTTLE_WINDOW_SECONDS: '60',
      REGISTRATION_THROTTLE: 'false',
      REGISTRATION_THROTTLE_PER_ADDRESS: '7',
      REGISTRATION_THROTTLE_WINDOW_SECONDS: '120',
      REQUEST_TIMEOUT_SECONDS: '10',
      WORKERS: '3',
      SHUTDOWN_DELAY_SECONDS: '6',
      SINGLE_INSTANCE: 'true',
      CACHE_MB: '16',
      LEAN_MEMORY: 'true',
      FAST_PATH: 'false',
      WEB_APP: 'false',
      METRICS_TOKEN: 'a-scrape-token',
      TAIL_TRACE: '/tmp/conduit.trace',
    }
    // every documented variable is given here, so none can be documented and ignored
    expect(Object.keys(env).sort()).toEqual(Object.keys(environment).sort())
    expect(loadConfig(env)).toEqual({
      ...defaults,
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'postgresql://app:secret@db.internal:6432/conduit?sslmode=require',
      databasePath: '/data/conduit.db',
      databasePoolMax: 25,
      databasePrepare: false,
      databaseTimeoutMs: 2000,
      jwtSecret: SECRET_32,
      tokenTtlSeconds: 3600,
      corsOrigins: ['https://a.example', 'https://b.example'],
      bodyLimitBytes: 2048,
      logFormat: 'json',
      logLevel: 'warn',
      trustProxy: true,
      loginThrottle: { enabled: false, perPair: 5, perAccount: 50, perAddress: 30, windowSeconds: 60 },
      registrationThrottle: { enabled: false, perAddress: 7, windowSeconds: 120 },
      requestTimeoutSeconds: 10,
      workers: 3,
      shutdownDelayMs: 6000,
      singleInstance: true,
      cacheMb: 16,
      leanMemory: true,
      fastPath: false,
      webApp: false,
      metricsToken: 'a-scrape-token',
      tailTrace: '/tmp/conduit.trace',
    })
    expect(() => loadConfig({ METRICS_TOKEN: 'two words' })).toThrow('METRICS_TOKEN must not contain spaces')
    expect(loadConfig({ DATABASE_TIMEOUT_SECONDS: '0' }).databaseTimeoutMs).toBe(0)
    expect(() => loadConfig({ DATABASE_TIMEOUT_SECONDS: '-1' })).toThrow('DATABASE_TIMEOUT_SECONDS must be between 0 and 3600, got -1')
  })

  test('rejects a LEAN_MEMORY that is neither true nor false', () => {
    expect(() => loadConfig({ LEAN_MEMORY: 'maybe' })).toThrow('LEAN_MEMORY must be true or false, got "maybe"')
    expect(loadConfig({ LEAN_MEMORY: 'off' }).leanMemory).toBe(false)
  })

  test('rejects a CACHE_MB below 1 or not an integer', () => {
    expect(() => loadConfig({ CACHE_MB: '0' })).toThrow('CACHE_MB must be between 1 and 65536, got 0')
    expect(() => loadConfig({ CACHE_MB: '8.5' })).toThrow('CACHE_MB must be an integer, got "8.5"')
    expect(loadConfig({ CACHE_MB: '1' }).cacheMb).toBe(1)
  })

  test('accepts the port bounds 0 and 65535', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0)
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535)
  })

  test.each(['abc', '-1', '65536', '80.5', '1e3', '0x50', ' 80', '8080abc'])('rejects PORT=%p', (port) => {
    expect(() => loadConfig({ PORT: port })).toThrow(ConfigError)
  })

  test('names the variable and the bad value in the error', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow('PORT must be an integer, got "abc"')
    expect(() => loadConfig({ PORT: '70000' })).toThrow('PORT must be between 0 and 65535, got 70000')
  })

  test("quotes the bad value as JSON: a CRLF file's \\r shows, and does not send the cursor back", () => {
    expect(() => loadConfig({ PORT: '3000\r' })).toThrow('PORT must be an integer, got "3000\\r"')
    expect(() => loadConfig({ TRUST_PROXY: 'maybe\r' })).toThrow('TRUST_PROXY must be true or false, got "maybe\\r"')
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow('LOG_FORMAT must be one of text, json, got "xml"')
  })

  test('reads HOST as an address or a host name (IPv6 with or without brackets), and refuses anything else', () => {
    for (const [raw, host] of [
      ['0.0.0.0', '0.0.0.0'],
      ['::', '::'],
      ['[::1]', '::1'],
      ['fe80::1', 'fe80::1'],
      ['localhost', 'localhost'],
      ['conduit-1.internal', 'conduit-1.internal'],
    ] as const)
      expect({ raw, host: loadConfig({ HOST: raw }).host }).toEqual({ raw, host })
    expect(() => loadConfig({ HOST: '0.0.0.0:3000' })).toThrow(
      'HOST must be an address or a host name (0.0.0.0, ::, localhost), got "0.0.0.0:3000": give the port with PORT',
    )
    for (const raw of ['0.0.0.0\r', ' 0.0.0.0', 'http://0.0.0.0', '[::1]:3000', 'a_b', '-x'])
      expect(() => loadConfig({ HOST: raw })).toThrow(
        `HOST must be an address or a host name (0.0.0.0, ::, localhost), got ${JSON.stringify(raw)}`,
      )
  })

  test('a PostgreSQL URL whose password needs percent-encoding says how; encoded, it is taken', () => {
    for (const password of ['50%off', 'a#b', 'a/b', 'a?b'])
      expect(() => loadConfig({ DATABASE_URL: `postgres://u:${password}@127.0.0.1:5432/db` })).toThrow(
        'the PostgreSQL URL is not a valid URL (postgres://user:password@host:port/database); in a user or password, write % @ : / ? # as %25 %40 %3A %2F %3F %23',
      )
    const url = 'postgres://u:50%25off%23%2F@127.0.0.1:5432/db'
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url)
  })

  test("names the variable probably meant by one it does not read, and leaves other programs' alone", () => {
    const env = {
      DATABSE_URL: 'postgres://x/y',
      DATABASE_POOL_SIZE: '5',
      JWT_SCRET: 's',
      JWT_SECRET_FILE: '/run/secrets/jwt',
      LOGIN_THROTTLE_WINDOW: '60',
      SHUTDOWN_DELAY: '3',
      METRIC_TOKEN: 't',
      // read, or not near enough to any (PGPORT is two letters from PORT, HOSTNAME four from HOST)
      DATABASE_URL: 'conduit.db',
      PGPORT: '5432',
      HOSTNAME: 'box',
      PATH: '/bin',
      NODE_OPTIONS: '',
      BUN_INSTALL: '/b',
    }
    expect(misspelledVariables(env)).toEqual([
      ['DATABSE_URL', 'DATABASE_URL'],
      ['DATABASE_POOL_SIZE', 'DATABASE_POOL_MAX'],
      ['JWT_SCRET', 'JWT_SECRET'],
      ['JWT_SECRET_FILE', 'JWT_SECRET'],
      ['LOGIN_THROTTLE_WINDOW', 'LOGIN_THROTTLE_WINDOW_SECONDS'],
      ['SHUTDOWN_DELAY', 'SHUTDOWN_DELAY_SECONDS'],
      ['METRIC_TOKEN', 'METRICS_TOKEN'],
    ])
  })

  test('rejects a JWT_SECRET shorter than 32 characters and accepts one of 32', () => {
    expect(() => loadConfig({ JWT_SECRET: 's'.repeat(31) })).toThrow(ConfigError)
    expect(() => loadConfig({ JWT_SECRET: 's'.repeat(31) })).toThrow('JWT_SECRET must be at least 32 characters')
    expect(loadConfig({ JWT_SECRET: SECRET_32 }).jwtSecret).toBe(SECRET_32)
  })

  test('does not echo a rejected JWT_SECRET', () => {
    try {
      loadConfig({ JWT_SECRET: 'too-short-but-secret' })
      throw new Error('did not throw')
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      expect((e as Error).message).not.toContain('too-short-but-secret')
    }
  })

  test.each([
    ['59', false],
    ['60', true],
    [String(10 * 365 * 24 * 3600), true],
    [String(10 * 365 * 24 * 3600 + 1), false],
    ['-60', false],
    ['1h', false],
  ])('JWT_TTL_SECONDS=%p is accepted: %p', (ttl, ok) => {
    if (ok) expect(loadConfig({ JWT_TTL_SECONDS: ttl }).tokenTtlSeconds).toBe(Number(ttl))
    else expect(() => loadConfig({ JWT_TTL_SECONDS: ttl })).toThrow(ConfigError)
  })

  test('reads CORS_ORIGINS as a trimmed list, dropping empty entries', () => {
    expect(loadConfig({ CORS_ORIGINS: ' https://a.example ,,https://b.example, ' }).corsOrigins).toEqual([
      'https://a.example',
      'https://b.example',
    ])
  })

  test('reads CORS_ORIGINS entries as a browser writes an Origin, and refuses what is not one', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://App.Example/, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example',
      'http://localhost:5173',
    ])
    for (const bad of [
      'notaurl',
      'app.example',
      'https://app.example/path',
      'https://app.example?x',
      'ftp://app.example',
      'https://u:p@app.example',
    ])
      expect(() => loadConfig({ CORS_ORIGINS: `https://ok.example,${bad}` })).toThrow(
        `CORS_ORIGINS: "${bad}" is not an origin (scheme://host or scheme://host:port, nothing after it)`,
      )
  })

  test('refuses a TAIL_TRACE whose directory does not exist (the trace is written only at the stop)', () => {
    expect(() => loadConfig({ TAIL_TRACE: '/no/such/dir/trace.json' })).toThrow(
      'TAIL_TRACE: the directory of /no/such/dir/trace.json does not exist',
    )
    expect(loadConfig({ TAIL_TRACE: '/tmp/conduit.trace' }).tailTrace).toBe('/tmp/conduit.trace')
  })

  test('reads CORS_ORIGINS=* (alone or in a list) as any origin', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*')
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, *' }).corsOrigins).toBe('*')
  })

  test.each([
    ['1023', false],
    ['1024', true],
    [String(1024 ** 3), true],
    [String(1024 ** 3 + 1), false],
    ['1MB', false],
    ['-2048', false],
  ])('BODY_LIMIT_BYTES=%p is accepted: %p', (limit, ok) => {
    if (ok) expect(loadConfig({ BODY_LIMIT_BYTES: limit }).bodyLimitBytes).toBe(Number(limit))
    else expect(() => loadConfig({ BODY_LIMIT_BYTES: limit })).toThrow(ConfigError)
  })

  test('reads LOG_FORMAT and LOG_LEVEL ignoring case and surrounding spaces', () => {
    const c = loadConfig({ LOG_FORMAT: ' JSON ', LOG_LEVEL: 'Debug' })
    expect(c.logFormat).toBe('json')
    expect(c.logLevel).toBe('debug')
  })

  test.each([
    ['LOG_FORMAT', 'xml'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'warning'],
  ])('rejects %s=%p', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(name)
  })

  test.each([
    ['1', true],
    ['true', true],
    ['YES', true],
    [' on ', true],
    ['0', false],
    ['false', false],
    ['No', false],
    ['off', false],
  ])('reads TRUST_PROXY=%p as %p', (raw, value) => {
    expect(loadConfig({ TRUST_PROXY: raw }).trustProxy).toBe(value)
    expect(loadConfig({ LOGIN_THROTTLE: raw }).loginThrottle.enabled).toBe(value)
  })

  test.each(['maybe', '2', 'enabled'])('rejects the boolean %p', (raw) => {
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError)
    expect(() => loadConfig({ LOGIN_THROTTLE: raw })).toThrow(ConfigError)
  })

  test.each([
    ['LOGIN_THROTTLE_PER_PAIR', '0'],
    ['LOGIN_THROTTLE_PER_ACCOUNT', '0'],
    ['LOGIN_THROTTLE_PER_ADDRESS', '0'],
    ['LOGIN_THROTTLE_WINDOW_SECONDS', '0'],
    ['LOGIN_THROTTLE_WINDOW_SECONDS', String(7 * 24 * 3600 + 1)],
    ['REQUEST_TIMEOUT_SECONDS', '0'],
    ['REQUEST_TIMEOUT_SECONDS', '256'],
    ['REQUEST_TIMEOUT_SECONDS', 'ten'],
  ])('rejects %s=%p', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
  })
})

skipIf(why.sqlitePass).describe('the SQLite file', () => {
  test('file: and sqlite: URIs are refused with the plain path to write, from either variable', () => {
    for (const env of [{ DATABASE_URL: 'file:data/c.db?mode=ro' }, { DATABASE_PATH: 'file:data/c.db?mode=ro' }])
      expect(() => loadConfig(env)).toThrow(
        'file:data/c.db?mode=ro is not a database this server uses: a postgres:// URL selects PostgreSQL, a file path SQLite (write data/c.db alone)',
      )
    expect(() => loadConfig({ DATABASE_URL: 'Sqlite:' })).toThrow('(write the path alone)')
  })

  test('a path that only holds such a word further on is a path', () => {
    expect(loadConfig({ DATABASE_URL: './file:c.db' }).databasePath).toBe('./file:c.db')
    expect(loadConfig({ DATABASE_PATH: 'data/sqlite:c.db' }).databasePath).toBe('data/sqlite:c.db')
    expect(loadConfig({ DATABASE_PATH: 'sqlite.db' }).databasePath).toBe('sqlite.db')
  })
})

skipIf(why.sqlitePass).describe('integer', () => {
  test('parses a decimal integer within the bounds, bounds included', () => {
    expect(integer('X', '5', 1, 10)).toBe(5)
    expect(integer('X', '1', 1, 10)).toBe(1)
    expect(integer('X', '10', 1, 10)).toBe(10)
    expect(integer('X', '007', 1, 10)).toBe(7)
  })

  test.each(['', ' 5', '5 ', '+5', '-0', '5.0', '5e0', 'five', '0x5', '-'])('rejects %p as not an integer', (raw) => {
    expect(() => integer('X', raw, 0, 10)).toThrow(`X must be an integer, got "${raw}"`)
  })

  test('rejects values outside the bounds', () => {
    expect(() => integer('X', '0', 1, 10)).toThrow('X must be between 1 and 10, got 0')
    expect(() => integer('X', '11', 1, 10)).toThrow('X must be between 1 and 10, got 11')
    expect(() => integer('X', '-5', 0, 10)).toThrow('X must be between 0 and 10, got -5')
  })

  test('throws ConfigError', () => {
    expect(() => integer('X', 'nope', 0, 1)).toThrow(ConfigError)
  })
})

skipIf(why.sqlitePass).describe('redactUrl', () => {
  test('hides a password in the user part and in the query (libpq form), and nothing else', () => {
    expect(redactUrl('postgres://ann:s3cret@db:5432/conduit')).toBe('postgres://ann:***@db:5432/conduit')
    expect(redactUrl('postgres://ann@db/conduit?password=s3cret&sslmode=require')).toBe(
      'postgres://ann@db/conduit?password=***&sslmode=require',
    )
    expect(redactUrl('postgres://ann@db/conduit?sslpassword=k3y&PASSWORD=x')).toBe('postgres://ann@db/conduit?sslpassword=***&PASSWORD=***')
    expect(redactUrl('postgres://ann@db/conduit?sslmode=require')).toBe('postgres://ann@db/conduit?sslmode=require')
  })
})
