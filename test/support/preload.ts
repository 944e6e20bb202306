import { afterAll, afterEach } from 'bun:test'
import { closeTestStores, dropTestDatabases } from './backend.ts'

// For every test of every file: a test's apps close their database connections
// after it (on PostgreSQL their schemas are emptied for reuse, or dropped), and the databases this
// test process made on PostgreSQL go at its end.
afterEach(closeTestStores, 30_000)
afterAll(dropTestDatabases, 60_000)
