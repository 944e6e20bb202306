-- 004: accounts an operator locked (`conduit admin users lock`). A locked
-- account cannot log in and its tokens are refused; what it wrote stays
-- readable. NULL: not locked; else when it was locked (milliseconds since the
-- epoch, UTC), which `conduit admin users show` prints. Locking also bumps
-- token_version (src/users/writes.ts), so tokens are refused by the check
-- they already go through.
ALTER TABLE users ADD COLUMN locked_at INTEGER;
