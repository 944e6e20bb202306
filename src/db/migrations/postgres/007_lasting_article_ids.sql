-- 007 (PostgreSQL; the same number as migrations/sqlite/007_lasting_article_ids.sql):
-- article ids that are never reused. An identity column never hands out a
-- value twice, so there is nothing to change here; the number is kept so both
-- backends count their schema versions alike.
SELECT 1;
