import { ADMIN } from '../../auth/actor.ts'
import { articlesOn } from '../../articles/index.ts'
import { commentsOn } from '../../comments/index.ts'
import { ADMIN_OPTIONS, DB_USAGE, found, withStore, wrote } from '../admin.ts'
import type { Command } from '../command.ts'
import { UsageError } from '../errors.ts'

/** `conduit admin articles|comments delete`: moderation, as Mastodon's `tootctl statuses remove`. */

const deleteArticle: Command = {
  name: 'admin articles delete',
  usage: `SLUG [--json] ${DB_USAGE}`,
  summary: ["delete anyone's article, with its comments and favorites"],
  args: 1,
  options: ADMIN_OPTIONS,
  run: (input) =>
    withStore(input.config, async (store) => {
      const [slug] = input.args as [string]
      await found(() => articlesOn(store).writes.delete(ADMIN, slug), `${input.name}: no article "${slug}" in ${store.location}`)
      return wrote(input.flags, store, `deleted the article ${slug} with its comments and favorites`, { slug, deleted: true })
    }),
}

const deleteComment: Command = {
  name: 'admin comments delete',
  usage: `ID [--json] ${DB_USAGE}`,
  summary: ["delete anyone's comment, by its id alone"],
  args: 1,
  options: ADMIN_OPTIONS,
  run: (input) => {
    const [raw] = input.args as [string]
    if (!/^[1-9]\d*$/.test(raw)) throw new UsageError(`${input.name}: a comment id is a positive whole number, got "${raw}"`)
    // one larger than any id names no comment: the writes find none (as for any unknown id), and the message says it as typed
    const id = Number(raw)
    return withStore(input.config, async (store) => {
      const { slug } = await found(
        () => commentsOn(store).writes.deleteById(ADMIN, id),
        `${input.name}: no comment ${raw} in ${store.location}`,
      )
      return wrote(input.flags, store, `deleted comment ${id} of the article ${slug}`, { id, article: slug, deleted: true })
    })
  },
}

export const adminContentCommands: Command[] = [deleteArticle, deleteComment]
