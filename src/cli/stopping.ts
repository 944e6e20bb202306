/** The signals that stop a command, and the status it then exits with (128 + the signal's number). */
const STOPS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const

/**
 * Until the returned function is called, a stop (a hang-up, Ctrl-C, SIGTERM) first runs `undo`
 * (what must not outlive the command: a terminal left raw, a temporary copy), then exits as the
 * signal would have.
 */
export function onStop(undo: () => void): () => void {
  const offs = Object.entries(STOPS).map(([signal, status]) => {
    const stop = () => {
      undo()
      process.exit(status)
    }
    process.once(signal, stop)
    return () => void process.off(signal, stop)
  })
  return () => {
    for (const off of offs) off()
  }
}
