/** A database this binary cannot (or must not) migrate; reported as one line. */
export class MigrationError extends Error {}

/** Another program's database, named by its first three tables: `way` says what to do instead. */
export function othersTables(tables: readonly string[], way: string): MigrationError {
  const more = tables.length > 3 ? `, and ${tables.length - 3} more` : ''
  return new MigrationError(`holds another program's tables (${tables.slice(0, 3).join(', ')}${more}), ${way}`)
}
