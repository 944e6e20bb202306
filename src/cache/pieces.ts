/**
 * A JSON body as the pieces it is made of: strings (cached parts, fixed
 * fragments) and integers (counts). SlabCache.set writes the pieces straight
 * into its bytes, so composing a list page leaves no string behind; built as
 * one string, each page left its ropes and their flattened copy (10-40 KB a
 * list page) for the collector, and was measured, flattened and encoded in
 * three passes (docs/PERFORMANCE.md, step 13: 0.89x the CPU per request
 * under mix-0).
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
