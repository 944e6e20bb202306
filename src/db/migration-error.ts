/** A database this binary cannot (or must not) migrate; reported as one line. */
export class MigrationError extends Error {}
