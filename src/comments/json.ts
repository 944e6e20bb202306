/**
 * SQL fragments that build JSON inside SQLite (json_object escapes), for the
 * comments. Each expects a `:viewer` parameter: the caller's user id, 0 when
 * anonymous.
 */

export const isoTime = (column: string) =>
  `strftime('%Y-%m-%dT%H:%M:%S', ${column} / 1000, 'unixepoch') || printf('.%03dZ', ${column} % 1000)`

const bool = (condition: string) => `json(CASE WHEN ${condition} THEN 'true' ELSE 'false' END)`

/** The author (or any user `u`) as a Profile seen by :viewer. */
export const profileJson = (u: string) =>
  `json_object('username', ${u}.username, 'bio', ${u}.bio, 'image', ${u}.image, 'following', ${bool(
    `EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = ${u}.id)`,
  )})`
