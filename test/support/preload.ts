import { afterAll, afterEach } from 'bun:test'
import { closeTestStores, dropTestDatabases } from './backend.ts'

// Every test file: a test's apps close their database connections after it,
// and the databases this process made on PostgreSQL go at the end.
afterEach(closeTestStores)
afterAll(dropTestDatabases)
