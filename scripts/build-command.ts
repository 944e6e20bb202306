import pkg from '../package.json'

/**
 * The command `bun run build` runs (package.json), writing the binary to `outfile` with this Bun:
 * the tests and the soak build exactly what CI and the Dockerfile build, entry points included.
 */
export function buildCommand(outfile: string): string[] {
  const words = pkg.scripts.build.split(/\s+/)
  const out = words.indexOf('--outfile')
  if (words[0] !== 'bun' || out < 0)
    throw new Error(`package.json's build script is not "bun build ... --outfile <file>": ${pkg.scripts.build}`)
  return [process.execPath, ...words.slice(1, out), '--outfile', outfile]
}
