import { Value } from '@sinclair/typebox/value'
import { fieldMessage } from '../http/validation.ts'
import { Password } from '../users/schemas.ts'
import { CliError, UsageError } from './errors.ts'
import { onStop } from './stopping.ts'

/** More than any password the rules allow (256 characters of up to 4 bytes each, and a line end): nothing past it is read. */
const MAX_BYTES = 2048

/**
 * A new password, read from standard input: never from the command line,
 * where every user of the machine sees it (ps, /proc) and the shell keeps it
 * in its history. One line; its line end (`\n` or `\r\n`) is not part of it.
 * From a terminal it is asked for without echo, and asked for again: a typing
 * mistake nobody saw would set a password nobody knows.
 */
export async function readPassword(name: string, prompt: string): Promise<string> {
  const reader = Bun.stdin.stream().getReader()
  try {
    const input = inputOf(name, reader)
    if (process.stdin.isTTY !== true) return oneLine(name, await input.all())
    const first = await typed(name, prompt, input.next)
    if ((await typed(name, 'The same again: ', input.next)) !== first)
      throw new UsageError(`${name}: the two passwords typed differ; nothing changed`)
    return first
  } finally {
    reader.releaseLock()
  }
}

const ENTER = [0x0d, 0x0a]
const INTERRUPT = 0x03 // Ctrl-C
const END = 0x04 // Ctrl-D
const ERASE = [0x7f, 0x08] // Backspace, Ctrl-H
const KILL = 0x15 // Ctrl-U
const ESC = 0x1b

/**
 * A line typed at a terminal after `prompt`, not shown. The terminal is put
 * in raw mode (no echo, keys as they are typed), as passwd turns echo off but
 * with no stty to run (the Docker image has none), and the keys a terminal
 * would act on are acted on here: Enter ends the line, Backspace and Ctrl-U
 * erase, Ctrl-C stops (130, the terminal restored), Ctrl-D on an empty line
 * stops the command, nothing changed; keys that send escape sequences
 * (arrows) are skipped, and a signal restores the terminal before it stops.
 */
async function typed(name: string, prompt: string, next: () => Promise<number | undefined>): Promise<string> {
  process.stderr.write(prompt)
  const raw = (on: boolean) => process.stdin.setRawMode(on)
  // killed while raw (a container stopped, a hang-up), the shell would be left without echo
  const listening = onStop(() => {
    raw(false)
    process.stderr.write('\n')
  })
  raw(true)
  try {
    const bytes: number[] = []
    for (;;) {
      const b = await next()
      if (b === undefined || (b === END && bytes.length === 0))
        throw new CliError(`${name}: no password typed (end of input); nothing changed`)
      if (b === INTERRUPT) {
        raw(false)
        process.stderr.write('\n')
        process.exit(130)
      }
      if (ENTER.includes(b)) return new TextDecoder().decode(new Uint8Array(bytes))
      if (b === ESC) {
        // a key that sends a sequence (arrows, Delete, Home, Alt+key) is no part of a password: skipped whole
        const kind = await next()
        if (kind === 0x5b) for (let c = await next(); c !== undefined && (c < 0x40 || c > 0x7e); c = await next());
        else if (kind === 0x4f) await next()
        continue
      }
      if (ERASE.includes(b)) {
        // one character: its continuation bytes (10xxxxxx), then its first
        while (bytes.length && ((bytes.pop() as number) & 0xc0) === 0x80);
      } else if (b === KILL) bytes.length = 0
      else if (b >= 0x20 || b === 0x09) bytes.push(b)
      if (bytes.length > MAX_BYTES) throw new UsageError(`${name}: the password typed is longer than any password may be; nothing changed`)
    }
  } finally {
    raw(false)
    listening()
    process.stderr.write('\n')
  }
}

/**
 * Standard input through one reader (a second reader of it would wait for
 * ever): `all` of it up to its end (a pipe or a file), or the `next` byte
 * (a terminal; undefined at the end).
 */
function inputOf(name: string, reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }) {
  let pending: Uint8Array = new Uint8Array()
  let at = 0
  return {
    async all(): Promise<string> {
      const chunks: Uint8Array[] = []
      let size = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done || value === undefined) return new TextDecoder().decode(Buffer.concat(chunks))
        size += value.length
        if (size > MAX_BYTES)
          throw new UsageError(`${name}: the password on standard input is longer than any password may be; nothing changed`)
        chunks.push(value)
      }
    },
    async next(): Promise<number | undefined> {
      while (at >= pending.length) {
        const { done, value } = await reader.read()
        if (done || value === undefined) return undefined
        pending = value
        at = 0
      }
      return pending[at++]
    },
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
