-- 001: the whole RealWorld model.
--
-- Counters (favorites_count, articles_count, ...) are kept by triggers in the
-- same transaction as the rows they count, so they can never drift from the
-- rows and list pages never need count(*) over a large table.
--
-- Times are integer milliseconds since the epoch (UTC).

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE users (
  id              INTEGER PRIMARY KEY,
  -- NOCASE folds ASCII only: exactly "unique ignoring ASCII case".
  username        TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  -- stored lower-cased by the application
  email           TEXT    NOT NULL UNIQUE,
  password_hash   TEXT    NOT NULL,
  bio             TEXT,
  image           TEXT,
  -- bumped on password change; tokens carry it, older ones stop verifying
  token_version   INTEGER NOT NULL DEFAULT 0,
  articles_count  INTEGER NOT NULL DEFAULT 0,  -- articles written
  favorites_count INTEGER NOT NULL DEFAULT 0,  -- articles favorited
  created_at      INTEGER NOT NULL
);

CREATE TABLE follows (
  follower_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  followee_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (follower_id, followee_id),
  CHECK (follower_id <> followee_id)
) WITHOUT ROWID;
CREATE INDEX follows_by_followee ON follows(followee_id, follower_id);

-- Article ids grow with created_at (the insert takes max(now, newest created_at)),
-- so "createdAt desc, id desc" is simply "id desc": every list walks an index
-- backwards and stops after one page.
CREATE TABLE articles (
  id              INTEGER PRIMARY KEY,
  slug            TEXT    NOT NULL UNIQUE,
  title           TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  body            TEXT    NOT NULL,
  author_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  favorites_count INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
-- (created_at, id, author_id): the newest-first walk. Narrow, so deep offsets
-- step through small index pages instead of whole article rows, and covering
-- for the feed's walk that keeps only followed authors.
CREATE INDEX articles_recent ON articles(created_at, id, author_id);
-- (author_id, id): an author's articles newest first
CREATE INDEX articles_by_author ON articles(author_id);

CREATE TABLE tags (
  id             INTEGER PRIMARY KEY,
  name           TEXT    NOT NULL UNIQUE,
  articles_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tags_by_popularity ON tags(articles_count DESC, name);

CREATE TABLE article_tags (
  tag_id     INTEGER NOT NULL REFERENCES tags(id),
  article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
  PRIMARY KEY (tag_id, article_id)
) WITHOUT ROWID;
CREATE INDEX article_tags_by_article ON article_tags(article_id, tag_id);

CREATE TABLE favorites (
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, article_id)
) WITHOUT ROWID;
CREATE INDEX favorites_by_article ON favorites(article_id, user_id);

CREATE TABLE comments (
  id         INTEGER PRIMARY KEY,
  article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
  author_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  body       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- (article_id, id): an article's comments oldest first
CREATE INDEX comments_by_article ON comments(article_id);
CREATE INDEX comments_by_author ON comments(author_id);

CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('articles', 0);

CREATE TRIGGER articles_counted AFTER INSERT ON articles BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'articles';
  UPDATE users SET articles_count = articles_count + 1 WHERE id = NEW.author_id;
END;
CREATE TRIGGER articles_uncounted AFTER DELETE ON articles BEGIN
  UPDATE counters SET value = value - 1 WHERE name = 'articles';
  UPDATE users SET articles_count = articles_count - 1 WHERE id = OLD.author_id;
END;

CREATE TRIGGER article_tags_counted AFTER INSERT ON article_tags BEGIN
  UPDATE tags SET articles_count = articles_count + 1 WHERE id = NEW.tag_id;
END;
CREATE TRIGGER article_tags_uncounted AFTER DELETE ON article_tags BEGIN
  UPDATE tags SET articles_count = articles_count - 1 WHERE id = OLD.tag_id;
END;

CREATE TRIGGER favorites_counted AFTER INSERT ON favorites BEGIN
  UPDATE articles SET favorites_count = favorites_count + 1 WHERE id = NEW.article_id;
  UPDATE users SET favorites_count = favorites_count + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER favorites_uncounted AFTER DELETE ON favorites BEGIN
  UPDATE articles SET favorites_count = favorites_count - 1 WHERE id = OLD.article_id;
  UPDATE users SET favorites_count = favorites_count - 1 WHERE id = OLD.user_id;
END;
