/**
 * The skipped tests in bun test's output, by reason: test/support/skip.ts
 * ends a skipped test's name with `[skipped: reason]`, and bun test prints a
 * `(skip) name` line for each, with its file and again in a closing recap
 * ("N tests skipped:") when the run is long.
 */
export const NO_REASON = 'no reason given'

/** The end of a skipped test's name (test/support/skip.ts); the reason is read back from it. */
export const skipMark = (reason: string) => `[skipped: ${reason}]`

const reasonOf = (line: string) => /\[skipped: ([^\]]+)\]/.exec(line)?.[1]

/** The `(skip)` lines of one run, each once: the recap's when there is one, else those printed with each file. */
function skipLines(output: string): string[] {
  const recap = /^\d+ tests? skipped:\n((?:\(skip\) .*(?:\n|$))*)/m.exec(output)
  return (recap ? recap[1]! : output).split('\n').filter((l) => l.startsWith('(skip) '))
}

/** How many tests were skipped for each reason, most first. */
export function skipsByReason(output: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of skipLines(output)) {
    const reason = reasonOf(line) ?? NO_REASON
    counts.set(reason, (counts.get(reason) ?? 0) + 1)
  }
  return new Map([...counts].sort((a, b) => b[1] - a[1]))
}

/** The `(skip)` lines that give no reason. */
export function unexplainedSkips(output: string): string[] {
  return skipLines(output).filter((l) => reasonOf(l) === undefined)
}
