-- 002: ids that are never reused, usernames unique on their normalised form,
-- and the tables that several processes share (change log, login throttle,
-- slug counters).
--
-- SQLite gives a new row the largest rowid + 1: delete the newest comment or
-- user and the next one gets its id again, so a client holding comment 7 or
-- a token for user 7 would meet somebody else. AUTOINCREMENT never reuses an
-- id; SQLite cannot add it to a table, so both tables are rebuilt (foreign
-- keys are off around this migration, see migrate.ts). Ids deleted before
-- this migration above the largest remaining id may still come back once.

CREATE TABLE users_new (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  username        TEXT    NOT NULL,
  -- NFKC with ASCII case folded, computed by the application (see
  -- src/users/username.ts); uniqueness and lookups use this form
  username_key    TEXT    NOT NULL UNIQUE,
  -- stored lower-cased by the application
  email           TEXT    NOT NULL UNIQUE,
  password_hash   TEXT    NOT NULL,
  bio             TEXT,
  image           TEXT,
  -- bumped on password change; tokens carry it, older ones stop verifying
  token_version   INTEGER NOT NULL DEFAULT 0,
  articles_count  INTEGER NOT NULL DEFAULT 0,
  favorites_count INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
);
-- placeholder keys ('#id' cannot be a username); migrate.ts fills the real ones
INSERT INTO users_new (id, username, username_key, email, password_hash, bio, image, token_version,
                       articles_count, favorites_count, created_at)
  SELECT id, username, '#' || id, email, password_hash, bio, image, token_version,
         articles_count, favorites_count, created_at FROM users;
DROP TABLE users;
-- legacy mode: the triggers that name `users` are not re-parsed halfway
PRAGMA legacy_alter_table = ON;
ALTER TABLE users_new RENAME TO users;

CREATE TABLE comments_new (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
  author_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  body       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO comments_new SELECT id, article_id, author_id, body, created_at, updated_at FROM comments;
DROP TABLE comments;
ALTER TABLE comments_new RENAME TO comments;
PRAGMA legacy_alter_table = OFF;
-- (article_id, id): an article's comments oldest first
CREATE INDEX comments_by_article ON comments(article_id);
CREATE INDEX comments_by_author ON comments(author_id);

-- Slug suffixes: the next number to try for a base once the base itself is
-- taken. One row per base that was ever taken twice: allocation is one upsert,
-- whatever the number of articles sharing the base.
CREATE TABLE slug_counters (
  base TEXT PRIMARY KEY,
  next INTEGER NOT NULL
) WITHOUT ROWID;

-- The change log: every write appends the dependency keys it changed (see
-- src/cache/keys.ts) in its own transaction. Each process reads what others
-- appended before it answers from its caches. Old rows are purged.
CREATE TABLE changes (
  seq  INTEGER PRIMARY KEY AUTOINCREMENT,
  keys TEXT    NOT NULL,
  at   INTEGER NOT NULL
);
CREATE INDEX changes_by_time ON changes(at);

-- Login and registration throttling windows, shared by every process: the key
-- is a fixed-size digest (never the raw email or address).
CREATE TABLE throttle (
  key      TEXT    PRIMARY KEY,
  hits     INTEGER NOT NULL,
  reset_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX throttle_by_expiry ON throttle(reset_at);
