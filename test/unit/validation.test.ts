import { expect, test } from 'bun:test'
import { type TSchema, Type } from '@sinclair/typebox'
import { ValueErrorType as E } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { fieldKey, fieldMessage, validationErrors } from '../../src/http/validation.ts'
import { queryReader } from '../../src/http/query.ts'
import { Bio, Email, Image, Password, RegisterBody, UpdateUserBody, Username } from '../../src/users/schemas.ts'
import { skipIf, why } from '../support/skip.ts'

/** The message for the first error TypeBox reports for `value` against `schema`. */
function messageFor(schema: TSchema, value: unknown): string {
  const first = Value.Errors(schema, value).First()
  if (!first) throw new Error(`${JSON.stringify(value)} is valid`)
  return fieldMessage(first)
}

skipIf(why.sqlitePass).describe('fieldKey', () => {
  test('reports the whole body under "body" when the error is at the root', () => {
    expect(fieldKey('', true)).toBe('body')
    expect(fieldKey('/', true)).toBe('body')
    expect(fieldKey('', false)).toBe('body')
  })

  test('reports the wrapper itself when the wrapper is the problem', () => {
    expect(fieldKey('/user', true)).toBe('user')
    expect(fieldKey('/article', true)).toBe('article')
  })

  test('reports a field inside the wrapper under the field name', () => {
    expect(fieldKey('/user/email', true)).toBe('email')
    expect(fieldKey('/article/title', true)).toBe('title')
    expect(fieldKey('/comment/body', true)).toBe('body')
  })

  test('reports a list item under its list', () => {
    expect(fieldKey('/article/tagList/3', true)).toBe('tagList')
    expect(fieldKey('/article/tagList/0/x', true)).toBe('tagList')
  })

  test('reports unwrapped values (query, params) under their first segment', () => {
    expect(fieldKey('/limit', false)).toBe('limit')
    expect(fieldKey('/tag/1', false)).toBe('tag')
  })
})

skipIf(why.sqlitePass).describe('fieldMessage', () => {
  test('says "can\'t be blank" for a missing value', () => {
    expect(fieldMessage({ type: E.String, schema: Type.String(), value: undefined })).toBe("can't be blank")
    expect(fieldMessage({ type: E.StringMinLength, schema: Type.String({ minLength: 8 }), value: undefined })).toBe("can't be blank")
  })

  test('says "can\'t be blank" for an empty string where at least one character is required', () => {
    expect(messageFor(Username, '')).toBe("can't be blank")
    expect(messageFor(Email, '')).toBe("can't be blank")
  })

  test('names the minimum for a longer minimum length', () => {
    expect(messageFor(Password, 'short')).toBe('is too short (minimum is 8 characters)')
  })

  test('names the maximum for a string that is too long', () => {
    expect(messageFor(Username, 'a'.repeat(41))).toBe('is too long (maximum is 40 characters)')
    expect(messageFor(Password, 'a'.repeat(257))).toBe('is too long (maximum is 256 characters)')
  })

  test('says "is invalid" for a string of the wrong format', () => {
    expect(messageFor(Username, 'has space')).toBe('is invalid')
    expect(messageFor(Email, 'nope')).toBe('is invalid')
    expect(fieldMessage({ type: E.StringPattern, schema: Type.String({ pattern: '^a$' }), value: 'b' })).toBe('is invalid')
  })

  test('names the expected JSON type', () => {
    expect(messageFor(Type.String(), 5)).toBe('must be a string')
    expect(messageFor(Type.Object({}), 'x')).toBe('must be an object')
    expect(messageFor(Type.Array(Type.String()), 'x')).toBe('must be an array')
    expect(messageFor(Type.Integer(), 'x')).toBe('must be an integer')
    expect(messageFor(Type.Integer(), 1.5)).toBe('must be an integer')
    expect(messageFor(Type.Number(), 'x')).toBe('must be an integer')
    expect(messageFor(Type.Boolean(), 'x')).toBe('must be true or false')
  })

  test('names the bounds of numbers and lists', () => {
    expect(messageFor(Type.Integer({ minimum: 1 }), 0)).toBe('must be an integer of at least 1')
    expect(messageFor(Type.Integer({ maximum: 100 }), 101)).toBe('must be less than or equal to 100')
    expect(messageFor(Type.Array(Type.String(), { maxItems: 20 }), Array(21).fill('t'))).toBe('has too many items (maximum is 20)')
  })

  test('explains a query integer: plain decimal digits, at least its minimum', () => {
    const read = queryReader(
      Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })), offset: Type.Optional(Type.Integer({ minimum: 0 })) }),
    )
    const errors = (search: string) => {
      const q = read(search)
      return q.ok ? q.value : q.errors
    }
    expect(errors('limit=0')).toEqual({ limit: ['must be an integer of at least 1'] })
    expect(errors('limit=abc&offset=-1')).toEqual({
      limit: ['must be an integer of at least 1'],
      offset: ['must be an integer of at least 0'],
    })
    for (const bad of ['1.5', '+5', '1e1', '', ' 5', '0x10'])
      expect(errors(`offset=${encodeURIComponent(bad)}`)).toEqual({ offset: ['must be an integer of at least 0'] })
    expect(errors('limit=05&offset=00')).toEqual({ limit: 5, offset: 0 })
    // an integer however long is one: the lists clamp it (past the end is an empty page)
    for (const digits of [31, 400]) expect(errors(`offset=${'9'.repeat(digits)}`)).toEqual({ offset: expect.any(Number) })
    expect(errors('limit=1&limit=1')).toEqual({ limit: ['must be given only once'] })
  })

  test('reports the string rule a "string or null" value breaks', () => {
    expect(messageFor(Bio, 'b'.repeat(4001))).toBe('is too long (maximum is 4000 characters)')
    expect(messageFor(Image, 'bad\u0000')).toBe('must not contain the NUL character')
    expect(messageFor(Image, `https://example.com/${'i'.repeat(2030)}`)).toBe('is too long (maximum is 2048 characters)')
  })

  test('says "must be a string or null" for a "string or null" value of another type', () => {
    expect(messageFor(Bio, 5)).toBe('must be a string or null')
    expect(messageFor(Image, false)).toBe('must be a string or null')
    expect(messageFor(Bio, ['x'])).toBe('must be a string or null')
  })

  test('explains unions of an integer, and of a string or a list of strings', () => {
    expect(messageFor(Type.Union([Type.Integer(), Type.Boolean()]), 'x')).toBe('must be an integer')
    expect(messageFor(Type.Union([Type.String(), Type.Array(Type.String())]), 5)).toBe('must be a string or a list of strings')
  })

  test('falls back to "is invalid" for anything else', () => {
    expect(messageFor(Type.Literal('a'), 'b')).toBe('is invalid')
    expect(messageFor(Type.Union([Type.Literal('a'), Type.Literal('b')]), 'c')).toBe('is invalid')
  })

  test('never echoes the value', () => {
    const password = 'Echo-Me-If-You-Dare-257'.padEnd(257, '!')
    const first = Value.Errors(Password, password).First()!
    expect(fieldMessage(first)).not.toContain('Echo-Me')
  })
})

skipIf(why.sqlitePass).describe('the username and email formats', () => {
  test.each(['jake', 'Jake_the-Dog.1', 'a', '_', '-.-', '0123'])('accept the username %p', (username) => {
    expect(Value.Check(Username, username)).toBe(true)
  })

  test.each(['jake doe', 'jake@doe', 'jake!', 'jake/doe', 'jake\n', ''])('reject the username %p', (username) => {
    expect(Value.Check(Username, username)).toBe(false)
  })

  test.each(['jake@example.com', 'first.last+tag@sub.example.co.uk', 'a@b.io'])('accept the email %p', (email) => {
    expect(Value.Check(Email, email)).toBe(true)
  })

  test.each(['plain', '@example.com', 'jake@', 'jake@example', 'ja ke@example.com', 'a@b@c.com', 'jake@example..com'])(
    'reject the email %p',
    (email) => {
      expect(Value.Check(Email, email)).toBe(false)
    },
  )

  // "" as the schema describes what a client may send: normalisation makes it null (clears the image)
  test.each(['http://example.com', 'https://example.com/a.png?x=1#y', 'javascript:alert(1)', 'example.com', null, ''])(
    'accept the image %p',
    (image) => {
      expect(Value.Check(Image, image)).toBe(true)
    },
  )

  test.each(['x'.repeat(2049), 'a\u0000b', 5])('reject the image %p', (image) => {
    expect(Value.Check(Image, image)).toBe(false)
  })
})

skipIf(why.sqlitePass).describe('validationErrors', () => {
  test('reports every failing field of a wrapped body at once', () => {
    const errors = validationErrors(Value.Errors(RegisterBody, { user: { username: 'bad name', email: 'x', password: 'short' } }), true)
    expect(errors).toEqual({
      username: ['is invalid'],
      email: ['is invalid'],
      password: ['is too short (minimum is 8 characters)'],
    })
  })

  test('reports a missing field as blank only', () => {
    expect(validationErrors(Value.Errors(RegisterBody, { user: { username: 'jake', email: 'jake@example.com' } }), true)).toEqual({
      password: ["can't be blank"],
    })
  })

  test('reports a missing wrapper under its name', () => {
    expect(validationErrors(Value.Errors(UpdateUserBody, {}), true)).toEqual({ user: ["can't be blank"] })
  })

  test('reports a wrapper of the wrong type under its name', () => {
    expect(validationErrors(Value.Errors(UpdateUserBody, { user: 'jake' }), true)).toEqual({ user: ['must be an object'] })
  })

  test('lists each message once per field', () => {
    const schema = Type.Object({ tags: Type.Array(Type.String({ maxLength: 3 })) })
    expect(validationErrors(Value.Errors(schema, { tags: ['long one', 'long two'] }), false)).toEqual({
      tags: ['is too long (maximum is 3 characters)'],
    })
  })

  test('is empty for a valid value', () => {
    expect(
      validationErrors(
        Value.Errors(RegisterBody, { user: { username: 'jake', email: 'jake@example.com', password: 'password123' } }),
        true,
      ),
    ).toEqual({})
  })
})
