import { expect, test } from 'bun:test'
import { articleCreated, articleDeleted, articleEdited, favoriteChanged, fromLog, keys, logRow } from '../../src/keys/keys.ts'
import { EVERYTHING } from '../../src/keys/versions.ts'
import { skipIf, why } from '../support/skip.ts'

skipIf(why.sqlitePass).describe('change-log rows', () => {
  test("this version's rows give back exactly the keys written, in order", () => {
    const writes = [
      articleCreated({ id: 3, usernameKey: 'ann' }, ['a', 'b,c']),
      articleEdited(7, true, ['x']),
      articleEdited(7, false, []),
      articleDeleted(9),
      favoriteChanged(9, 3, 'ann'),
      [keys.viewer(2)],
      [EVERYTHING],
    ]
    for (const changed of writes) expect(fromLog(logRow(changed))).toEqual(changed)
  })

  test("an article's address moves only with a new slug or a deletion, never with a favorite", () => {
    expect(articleEdited(7, true, [])).toContain(keys.slugOf(7))
    expect(articleEdited(7, false, ['x'])).not.toContain(keys.slugOf(7))
    expect(articleDeleted(7)).toContain(keys.slugOf(7))
    expect(favoriteChanged(7, 3, 'ann')).not.toContain(keys.slugOf(7))
  })

  test("a row without the mark (an earlier version's) also moves the address of each article it names", () => {
    const old = [keys.article(7), keys.comments(7), keys.anyList, keys.article(2 ** 31), keys.user(7)].join(' ')
    expect(fromLog(old)).toEqual([
      keys.article(7),
      keys.comments(7),
      keys.anyList,
      keys.article(2 ** 31),
      keys.user(7),
      keys.slugOf(7),
      keys.slugOf(2 ** 31),
    ])
    // rows of other writers: everything, or keys that name no article
    expect(fromLog(String(EVERYTHING))).toEqual([EVERYTHING])
    expect(fromLog(`${keys.viewer(2)} ${keys.favoritesOf(2)}`)).toEqual([keys.viewer(2), keys.favoritesOf(2)])
  })
})
