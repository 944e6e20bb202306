/**
 * URL variants that both dispatchers must answer alike: repeated, bracketed
 * and comma values, `+`, empty values, percent-encodings (good and broken),
 * unknown names, case, trailing slashes, dot segments, limit/offset forms,
 * too many values. `slug` names an existing article, `user` an existing
 * username; the tags below are the ones the fixture's articles carry.
 */
export const FIXTURE_TAGS = ['a', 'x', 'y', 'x,y', '[a,b]', 'a b', 'a+b', '100%', 'Ünï', 'b']

export function urlVariants(slug: string, user: string, other: string): string[] {
  const enc = encodeURIComponent
  const filterValues = [
    'a',
    'x,y',
    enc('x,y'),
    '[a,b]',
    enc('[a,b]'),
    'a b',
    'a+b',
    enc('a+b'),
    'a%20b',
    '',
    '%zz',
    '100%',
    enc('100%'),
    'Ünï',
    enc('Ünï'),
    'nope',
    '%00',
  ]
  const queries: string[] = []
  for (const v of filterValues) queries.push(`tag=${v}`)
  for (const name of ['author', 'favorited']) {
    for (const v of [user, user.toUpperCase(), `${user},${other}`, enc(`${user},${other}`), `[${user}]`, '', 'nobody', `%${user}`]) {
      queries.push(`${name}=${v}`)
    }
    queries.push(`${name}=${user}&${name}=${other}`)
  }
  queries.push(
    'tag=x&tag=y',
    'tag=x,y&tag=a',
    'tag=a&tag=x,y',
    'tag=a&tag=a',
    'tag',
    'tag&tag=a',
    '&&tag=a&&',
    '',
    '&',
    'z=1',
    'tag=a&z=1',
    'Tag=a',
    'TAG=x',
    'tag[]=a',
    `${enc('tag')}=a`,
    `%74ag=a`,
    `tag=a&author=${user}`,
    `tag=b&favorited=${other}`,
    `author=${user}&favorited=${other}&tag=a`,
    Array.from({ length: 10 }, (_, i) => `tag=t${i}`).join('&'),
    Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&'),
    Array.from({ length: 11 }, (_, i) => `author=u${i}`).join('&'),
  )
  for (const limit of [
    '1',
    '2',
    '0',
    '-1',
    '5',
    '100',
    '101',
    '1e1',
    '+5',
    '%2B5',
    '',
    '05',
    '1.5',
    'ten',
    '99999999999999999999999999999',
  ]) {
    queries.push(`limit=${limit}`)
  }
  for (const offset of ['0', '1', '-1', '3', '1000000', '', 'x', '00']) queries.push(`offset=${offset}`)
  queries.push('limit=5&limit=6', 'offset=1&offset=1', 'limit=1&offset=1', 'limit=2&offset=1&tag=a', 'limit', 'offset')

  const urls: string[] = []
  // each also with a page of one, and after an unknown name (the answer is then never kept)
  for (const q of queries) urls.push(`/api/articles?${q}`, `/api/articles?${q}&limit=1`, `/api/articles?x=${q.length}&${q}`)
  for (const q of ['', '?limit=1', '?limit=0', '?offset=1', '?tag=a', '?limit=2&limit=3', '?z=1', '?limit=x']) {
    urls.push(`/api/articles/feed${q}`, `/api/articles/feed/${q}`)
  }
  urls.push(
    '/api/articles',
    '/api/articles/',
    '/api/articles?',
    '/api/tags',
    '/api/tags/',
    '/api/tags?x=1',
    '/api/tags?',
    '/API/tags',
    '/api//tags',
    `/api/articles/${slug}`,
    `/api/articles/${slug}/`,
    `/api/articles/${slug}//`,
    `/api/articles/${slug}?x=1`,
    `/api/articles/${enc(slug).replace(/./, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
    `/api/articles/${slug.toUpperCase()}`,
    `/api/articles/./${slug}`,
    `/api/articles/x/../${slug}`,
    `/api/articles/%2e/${slug}`,
    '/api/articles/%zz',
    '/api/articles/nope',
    '/api/articles/feed-2',
    `/api/articles/${slug}%2F`,
    `/api/articles/${slug}/comments`,
    `/api/articles/${slug}/comments/`,
    `/api/articles/${slug}/comments?x`,
    '/api/articles/nope/comments',
    `/api/profiles/${user}`,
    `/api/profiles/${user.toUpperCase()}`,
    `/api/profiles/${user}/`,
    `/api/profiles/%${user.charCodeAt(0).toString(16)}${user.slice(1)}`,
    `/api/profiles/${user}?x=1`,
    '/api/profiles/nobody',
    '/api/profiles/%zz',
    '/api/user',
    '/api/nope',
  )
  return urls
}
