/**
 * Articles leave the database as finished JSON: SQLite's json_object builds
 * each one (escaping included), so a list page is one string from one
 * statement, with no per-row object building in JavaScript.
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

function articleJson(withBody: boolean): string {
  return `json_object(
    'slug', a.slug, 'title', a.title, 'description', a.description,${withBody ? " 'body', a.body," : ''}
    'tagList', json((SELECT json_group_array(t.name ORDER BY t.name) FROM article_tags at JOIN tags t ON t.id = at.tag_id
                     WHERE at.article_id = a.id)),
    'createdAt', ${iso('a.created_at')},
    'updatedAt', ${iso('a.updated_at')},
    'favorited', ${bool('EXISTS (SELECT 1 FROM favorites WHERE user_id = :viewer AND article_id = a.id)')},
    'favoritesCount', a.favorites_count,
    'author', ${profileJson('u')})`
}

export const ARTICLE_JSON = articleJson(true)
/** List items carry no body. */
export const LIST_ITEM_JSON = articleJson(false)
export const isoTime = iso
