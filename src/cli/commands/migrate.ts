import { openStore } from '../../db/open.ts'
import { type Command, untimed } from '../command.ts'

export const migrateCommand: Command = {
  name: 'migrate',
  usage: '[--db FILE|URL]',
  summary: ['apply pending database migrations and exit'],
  args: 0,
  options: ['db'],
  async run({ config }) {
    const { store, applied } = await openStore(untimed(config))
    try {
      const version = await store.schemaVersion()
      console.log(
        applied.length ? `applied migrations ${applied.join(', ')}; schema version ${version}` : `up to date at schema version ${version}`,
      )
    } finally {
      await store.close()
    }
    return 0
  },
}
