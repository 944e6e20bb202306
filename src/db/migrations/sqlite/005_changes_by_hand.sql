-- 005: changes made by any other writer (sqlite3 by hand, a script) reach
-- every process's caches, as the service's own writes do through the change
-- log.
--
-- The service marks its own write transactions: SqliteChanges.write() adds 1
-- to writer.service first and takes it off again before it commits. SQLite
-- lets one transaction write at a time, so a value above 0 is only ever seen
-- inside the service's own write; every other writer sees 0. A row that such
-- a writer inserts, updates or deletes in a table the service answers from
-- adds 1 to writer.edits, and a process that finds edits moved (it looks
-- whenever another connection committed) drops everything it cached.
--
-- A counter rather than an EVERYTHING row in the change log: SQL cannot tell
-- whether the newest EVERYTHING row came from the current transaction or from
-- one committed earlier (that another process may already have read), so such
-- rows could not be deduplicated safely, and a bulk UPDATE by hand would
-- append one per row. The counter moves once per row, costs no log row, and a
-- process needs only to see that it moved.
CREATE TABLE writer (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  -- above 0 only inside the service's own write transactions
  service INTEGER NOT NULL,
  -- rows changed by other writers, ever
  edits   INTEGER NOT NULL
);
INSERT INTO writer (id, service, edits) VALUES (1, 0, 0);

CREATE TRIGGER users_inserted_by_hand AFTER INSERT ON users WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER users_updated_by_hand AFTER UPDATE ON users WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER users_deleted_by_hand AFTER DELETE ON users WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER follows_inserted_by_hand AFTER INSERT ON follows WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER follows_updated_by_hand AFTER UPDATE ON follows WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER follows_deleted_by_hand AFTER DELETE ON follows WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER tags_inserted_by_hand AFTER INSERT ON tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER tags_updated_by_hand AFTER UPDATE ON tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER tags_deleted_by_hand AFTER DELETE ON tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER articles_inserted_by_hand AFTER INSERT ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER articles_updated_by_hand AFTER UPDATE ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER articles_deleted_by_hand AFTER DELETE ON articles WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER article_tags_inserted_by_hand AFTER INSERT ON article_tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER article_tags_updated_by_hand AFTER UPDATE ON article_tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER article_tags_deleted_by_hand AFTER DELETE ON article_tags WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER favorites_inserted_by_hand AFTER INSERT ON favorites WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER favorites_updated_by_hand AFTER UPDATE ON favorites WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER favorites_deleted_by_hand AFTER DELETE ON favorites WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

CREATE TRIGGER comments_inserted_by_hand AFTER INSERT ON comments WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER comments_updated_by_hand AFTER UPDATE ON comments WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER comments_deleted_by_hand AFTER DELETE ON comments WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;

-- the article count of the unfiltered list
CREATE TRIGGER counters_inserted_by_hand AFTER INSERT ON counters WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER counters_updated_by_hand AFTER UPDATE ON counters WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
CREATE TRIGGER counters_deleted_by_hand AFTER DELETE ON counters WHEN (SELECT service FROM writer) = 0
BEGIN UPDATE writer SET edits = edits + 1; END;
