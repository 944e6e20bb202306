import { Value } from '@sinclair/typebox/value'
import { fieldMessage } from '../http/validation.ts'
import { Password } from '../users/schemas.ts'
import { UsageError } from './errors.ts'

/** More than any password the rules allow (256 characters of up to 4 bytes each, and a line end): nothing past it is read. */
const MAX_BYTES = 2048

/**
 * A new password, read from standard input: never from the command line,
 * where every user of the machine sees it (ps, /proc) and the shell keeps it
 * in its history. One line; its line end (`\n` or `\r\n`) is not part of it.
 * From a terminal it is asked for with echo off (`stty -echo`, as passwd
 * does); where stty is missing, what is typed shows.
 */
export async function readPassword(name: string, prompt: string): Promise<string> {
  const tty = process.stdin.isTTY === true
  if (!tty) return oneLine(name, await read(name, false))
  process.stderr.write(prompt)
  const echo = (on: boolean) => Bun.spawnSync(['stty', on ? 'echo' : '-echo'], { stdin: 'inherit', stdout: 'ignore', stderr: 'ignore' })
  // Ctrl-C while echo is off must not leave the terminal without it
  const interrupted = () => {
    echo(true)
    process.stderr.write('\n')
    process.exit(130)
  }
  process.once('SIGINT', interrupted)
  echo(false)
  try {
    return oneLine(name, await read(name, true))
  } finally {
    echo(true)
    process.off('SIGINT', interrupted)
    process.stderr.write('\n')
  }
}

/** Standard input up to its end, or (a terminal) its first line. */
async function read(name: string, tty: boolean): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = Bun.stdin.stream().getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      size += value.length
      if (size > MAX_BYTES)
        throw new UsageError(`${name}: the password on standard input is longer than any password may be; nothing changed`)
      if (tty && value.includes(10)) break
    }
  } finally {
    reader.releaseLock()
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks))
  return tty ? text.slice(0, text.indexOf('\n') + 1 || undefined) : text
}

function oneLine(name: string, text: string): string {
  const line = text.replace(/\r?\n$/, '')
  if (line.includes('\n')) throw new UsageError(`${name}: the password on standard input must be one line; nothing changed`)
  return line
}

/** Why registration would refuse `password`: its 422 message after the field's name, or undefined. */
export function passwordProblem(password: string): string | undefined {
  const e = Value.Errors(Password, password).First()
  return e && `password ${fieldMessage(e)}`
}
