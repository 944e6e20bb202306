import { expect, test } from 'bun:test'
import { isApi, serverOrigin } from '../../src/http/url.ts'
import { skipIf, why } from '../support/skip.ts'

skipIf(why.sqlitePass).describe('url', () => {
  test('isApi: a path under /api/, but not the API’s root, which answers without the database', () => {
    const api = ['/api/tags', '/api/articles?limit=1', '/api/user/', '/api//']
    const not = ['/', '/api', '/api/', '/api?x=1', '/api/?x=1', '/apis', '/health', '/swagger/json']
    expect(api.filter((p) => !isApi(`http://localhost${p}`))).toEqual([])
    expect(not.filter((p) => isApi(`http://localhost${p}`))).toEqual([])
  })

  test('serverOrigin: a wildcard address as a name one can open, IPv6 in brackets', () => {
    expect(serverOrigin('0.0.0.0', 3000)).toBe('http://localhost:3000')
    expect(serverOrigin('::', 3000)).toBe('http://localhost:3000')
    expect(serverOrigin('0.0.0.0', 3000, '127.0.0.1')).toBe('http://127.0.0.1:3000')
    expect(serverOrigin('10.0.0.5', 8080)).toBe('http://10.0.0.5:8080')
    expect(serverOrigin('::1', 3000)).toBe('http://[::1]:3000')
    expect(serverOrigin('conduit.internal', 80)).toBe('http://conduit.internal:80')
  })
})
