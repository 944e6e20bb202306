/**
 * Articles leave the database as finished JSON: SQLite's json_object builds
 * each one (escaping included), so no per-row object building happens in
 * JavaScript.
 *
 * Every fragment expects `a` (articles), `u` (its author) and a `:viewer`
 * parameter: the caller's user id, 0 when anonymous.
 */

const iso = (column: string) =>
  `strftime('%Y-%m-%dT%H:%M:%S', ${column} / 1000, 'unixepoch') || printf('.%03dZ', ${column} % 1000)`

const bool = (condition: string) => `json(CASE WHEN ${condition} THEN 'true' ELSE 'false' END)`

/** The author (or any user `u`) as a Profile seen by :viewer. */
export const profileJson = (u: string) =>
  `json_object('username', ${u}.username, 'bio', ${u}.bio, 'image', ${u}.image, 'following', ${bool(
    `EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = ${u}.id)`,
  )})`

const TAG_LIST = `json((SELECT json_group_array(t.name ORDER BY t.name) FROM article_tags at JOIN tags t ON t.id = at.tag_id
                       WHERE at.article_id = a.id))`

/** A whole article seen by :viewer. */
export const ARTICLE_JSON = `json_object(
    'slug', a.slug, 'title', a.title, 'description', a.description, 'body', a.body,
    'tagList', ${TAG_LIST},
    'createdAt', ${iso('a.created_at')},
    'updatedAt', ${iso('a.updated_at')},
    'favorited', ${bool('EXISTS (SELECT 1 FROM favorites WHERE user_id = :viewer AND article_id = a.id)')},
    'favoritesCount', a.favorites_count,
    'author', ${profileJson('u')})`

/**
 * A list item split around its two viewer-dependent values, so the parts can
 * be cached and shared by every viewer:
 *   head + favorited + mid + following + "}}"
 */
export const LIST_ITEM_PARTS = `
    a.id, a.author_id,
    json_object('slug', a.slug, 'title', a.title, 'description', a.description, 'tagList', ${TAG_LIST},
                'createdAt', ${iso('a.created_at')}, 'updatedAt', ${iso('a.updated_at')}) AS head,
    a.favorites_count,
    json_object('username', u.username, 'bio', u.bio, 'image', u.image) AS author`

export interface ListItemParts {
  id: number
  author_id: number
  head: string
  favorites_count: number
  author: string
}

export interface ListItem {
  authorId: number
  head: string
  mid: string
}

/** Cuts the closing braces so the viewer-dependent fields can be appended. */
export function listItem(p: ListItemParts): ListItem {
  return {
    authorId: p.author_id,
    head: `${p.head.slice(0, -1)},"favorited":`,
    mid: `,"favoritesCount":${p.favorites_count},"author":${p.author.slice(0, -1)},"following":`,
  }
}

export const isoTime = iso
