/**
 * A JSON body as the pieces it is made of: strings (cached parts, fixed
 * fragments) and integers (counts). SlabCache.set writes the pieces straight
 * into its bytes, so composing a list page leaves no string behind. Built as
 * one string, each page would leave its ropes and their flattened copy for
 * the collector, and be measured, flattened and encoded in three passes.
 */
export type Pieces = (string | number)[]

/** What a read builds: one string, or pieces. */
export type Body = string | Pieces

/** The body as one string (for the answers that are not kept). */
export const text = (body: Body): string => (typeof body === 'string' ? body : body.join(''))

/** At most how many UTF-8 bytes the pieces take: 3 per UTF-16 unit, 32 per number (a double prints in at most 26). */
export function maxBytes(pieces: Pieces): number {
  let n = 0
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!
    n += typeof p === 'string' ? p.length * 3 : 32
  }
  return n
}

/** Exactly how many UTF-8 bytes the pieces take (one pass over their characters). */
export function byteLength(pieces: Pieces): number {
  let n = 0
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!
    n += typeof p === 'string' ? Buffer.byteLength(p) : String(p).length
  }
  return n
}
