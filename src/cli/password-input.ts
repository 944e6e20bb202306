import { Value } from '@sinclair/typebox/value'
import { fieldMessage } from '../http/validation.ts'
import { Password } from '../users/schemas.ts'
import { CliError, UsageError } from './errors.ts'

/** More than any password the rules allow (256 characters of up to 4 bytes each, and a line end): nothing past it is read. */
const MAX_BYTES = 2048

/**
 * A new password, read from standard input: never from the command line,
 * where every user of the machine sees it (ps, /proc) and the shell keeps it
 * in its history. One line; its line end (`\n` or `\r\n`) is not part of it.
 * From a terminal it is asked for with echo off (`stty -echo`, as passwd
 * does; where stty is missing, what is typed shows), and asked for again:
 * a typing mistake nobody saw would set a password nobody knows.
 */
export async function readPassword(name: string, prompt: string): Promise<string> {
  const reader = Bun.stdin.stream().getReader()
  try {
    const read = lines(name, reader)
    if (process.stdin.isTTY !== true) return oneLine(name, await read(false))
    const first = ended(name, await typed(prompt, () => read(true)))
    if (ended(name, await typed('The same again: ', () => read(true))) !== first)
      throw new UsageError(`${name}: the two passwords typed differ; nothing changed`)
    return oneLine(name, first)
  } finally {
    reader.releaseLock()
  }
}

/** A line typed at a terminal, unless the input ended before its line end (Ctrl-D): then the command stops there. */
function ended(name: string, line: string): string {
  if (!line.endsWith('\n')) throw new CliError(`${name}: no password typed (end of input); nothing changed`)
  return line
}

/** A line typed at a terminal after `prompt`, with echo off. */
async function typed(prompt: string, read: () => Promise<string>): Promise<string> {
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
    return await read()
  } finally {
    echo(true)
    process.off('SIGINT', interrupted)
    process.stderr.write('\n')
  }
}

/**
 * Standard input through one reader (a second reader of it would wait for ever): all of it up to
 * its end, or (`line`, a terminal) up to the next line end, which is kept for oneLine to drop.
 */
function lines(name: string, reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }) {
  let pending: Uint8Array = new Uint8Array()
  let size = 0
  return async (line: boolean): Promise<string> => {
    for (;;) {
      const end = line ? pending.indexOf(10) : -1
      if (end >= 0) {
        const text = new TextDecoder().decode(pending.subarray(0, end + 1))
        pending = pending.subarray(end + 1)
        return text
      }
      const { done, value } = await reader.read()
      if (done || value === undefined) {
        const text = new TextDecoder().decode(pending)
        pending = new Uint8Array()
        return text
      }
      size += value.length
      if (size > MAX_BYTES)
        throw new UsageError(`${name}: the password on standard input is longer than any password may be; nothing changed`)
      pending = Buffer.concat([pending, value])
    }
  }
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
