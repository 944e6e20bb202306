-- 007: article ids that are never reused, as 002 made user and comment ids.
--
-- Delete the newest article and the next one got its id again: a cache
-- holding the old id (a reader's favorites, kept as a set of ids) then
-- described the new article, which showed as favorited by the old one's
-- readers. Rebuilt with AUTOINCREMENT (foreign keys are off around this
-- migration, see migrate.ts); its indexes and triggers are made again as
-- 001 and 005 made them. Ids deleted before this migration above the largest
-- remaining id may still come back once.

CREATE TABLE articles_new (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  slug            TEXT    NOT NULL UNIQUE,
  title           TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  body            TEXT    NOT NULL,
  author_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  favorites_count INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
INSERT INTO articles_new (id, slug, title, description, body, author_id, favorites_count, created_at, updated_at)
  SELECT id, slug, title, description, body, author_id, favorites_count, created_at, updated_at FROM articles;
DROP TABLE articles;
-- legacy mode: the tables and triggers that name `articles` are not re-parsed halfway
PRAGMA legacy_alter_table = ON;
ALTER TABLE articles_new RENAME TO articles;
PRAGMA legacy_alter_table = OFF;

CREATE INDEX articles_recent ON articles(created_at, id, author_id);
CREATE INDEX articles_by_author ON articles(author_id);

CREATE TRIGGER articles_counted AFTER INSERT ON articles BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'articles';
  UPDATE users SET articles_count = articles_count + 1 WHERE id = NEW.author_id;
END;
CREATE TRIGGER articles_uncounted AFTER DELETE ON articles BEGIN
  UPDATE counters SET value = value - 1 WHERE name = 'articles';
  UPDATE users SET articles_count = articles_count - 1 WHERE id = OLD.author_id;
END;

CREATE TRIGGER articles_inserted_by_hand AFTER INSERT ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER articles_updated_by_hand AFTER UPDATE ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER articles_deleted_by_hand AFTER DELETE ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
