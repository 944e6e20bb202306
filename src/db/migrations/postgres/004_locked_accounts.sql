-- 004 (PostgreSQL; the same meaning as migrations/sqlite/004_locked_accounts.sql):
-- accounts an operator locked (`conduit admin users lock`). A locked account
-- cannot log in and its tokens are refused; what it wrote stays readable.
-- NULL: not locked; else when it was locked (milliseconds since the epoch,
-- UTC). Locking also bumps token_version (src/users/writes.ts), so tokens are
-- refused by the check they already go through. Adding a nullable column
-- without a default rewrites no row.
ALTER TABLE users ADD COLUMN locked_at bigint;
