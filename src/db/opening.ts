/** What an open is doing, for the log lines that say a start is slow (src/db/open.ts). */
export type OpeningStep = (doing: string, fields?: Record<string, string | number>) => void

/** The step both backends report when migrating begins. */
export const MIGRATING = 'migrating it'
