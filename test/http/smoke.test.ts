import { describe, expect, test } from 'bun:test'
import { testApp } from '../support/app.ts'
import { createArticle, registerUser } from '../support/fixtures.ts'

describe('test support', () => {
  test('registers a user and creates an article through HTTP', async () => {
    const app = await testApp()
    const jake = await registerUser(app)
    const article = await createArticle(app, jake.token, { title: 'Hello', tagList: ['b', 'a'] })
    expect(article.slug).toBe('hello')
    expect(article.tagList).toEqual(['a', 'b'])
  })
})
