import { integer } from '../../config.ts'
import { openStore } from '../../db/open.ts'
import { NotEmptyError, SEED_PASSWORD, seedDatabase } from '../seed-data.ts'
import { type Command, untimed } from '../command.ts'
import { UsageError } from '../errors.ts'

export const seedCommand: Command = {
  name: 'seed',
  usage: '[--db FILE|URL] [--users N] [--articles N] [--seed N]',
  summary: [
    'fill an empty database with demo data',
    '(defaults: 1000 users, 100000 articles, seed 1;',
    `every user's password is "${SEED_PASSWORD}")`,
  ],
  args: 0,
  options: ['db', 'users', 'articles', 'seed'],
  async run({ config, flags }) {
    const o = {
      users: flags.users === undefined ? 1000 : integer('--users', flags.users, 1, 10_000_000),
      articles: flags.articles === undefined ? 100_000 : integer('--articles', flags.articles, 0, 100_000_000),
      seed: flags.seed === undefined ? 1 : integer('--seed', flags.seed, 0, 2 ** 32 - 1),
    }
    const { store } = await openStore(untimed(config))
    try {
      const t0 = performance.now()
      const counts = await seedDatabase(store.bulk, {
        ...o,
        tags: 1000,
        follows: 10,
        favoritesPerArticle: 1,
        commentsPerArticle: 0.2,
        passwordHash: await Bun.password.hash(SEED_PASSWORD, { algorithm: 'argon2id', ...config.passwordHash }),
        onProgress: (m) => console.error(`seed: ${m}`),
      })
      console.log(`seeded ${store.location} in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`)
    } catch (e) {
      if (!(e instanceof NotEmptyError)) throw e
      const users = `${e.users} user${e.users === 1 ? '' : 's'}`
      throw new UsageError(
        `seed: the database ${store.location} already has ${users}; seed fills only an empty database: name a new one with --db`,
      )
    } finally {
      await store.close()
    }
    return 0
  },
}
