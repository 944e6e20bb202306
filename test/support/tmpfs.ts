import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Reason } from './skip.ts'

/**
 * A small tmpfs: a disk a test can fill for real, so SQLite meets
 * SQLITE_FULL as it would on a full volume. Mounting needs root (CAP_SYS_ADMIN;
 * CI runs as root); elsewhere `tmpfsReason()` says why not, for skipIf.
 */

let reason: Reason | null = null

/** Why a tmpfs cannot be mounted here (checked once, by mounting one), or false. */
export function tmpfsReason(): Reason {
  if (reason !== null) return reason
  if (process.getuid?.() !== 0) return (reason = 'mounting a tmpfs needs root (CI runs as root)')
  try {
    mountTmpfs(64 * 1024).unmount()
    reason = false
  } catch (e) {
    reason = `mounting a tmpfs is not allowed here (${(e as Error).message.split('\n')[0]})`
  }
  return reason
}

export interface Tmpfs {
  dir: string
  /** Writes a file of zeros until the disk has no room left; returns its path (unlink it to free the space). */
  fill(): string
  /** Unmounts and removes the mount point; safe to call twice. */
  unmount(): void
}

export function mountTmpfs(bytes: number): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'conduit-tmpfs-'))
  const mount = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${bytes},mode=0777`, 'tmpfs', dir], { stderr: 'pipe' })
  if (mount.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`mount -t tmpfs: ${mount.stderr.toString().trim() || `exit ${mount.exitCode}`}`)
  }
  let mounted = true
  let fillers = 0
  return {
    dir,
    fill() {
      const path = join(dir, `filler-${++fillers}`)
      const fd = openSync(path, 'w')
      const chunk = new Uint8Array(4096)
      try {
        for (;;) writeSync(fd, chunk)
      } catch (e) {
        if ((e as { code?: string }).code !== 'ENOSPC') {
          closeSync(fd)
          unlinkSync(path)
          throw e
        }
      }
      closeSync(fd)
      return path
    },
    unmount() {
      if (!mounted) return
      mounted = false
      // lazy: a process still holding a file there (killed, not yet reaped) does not keep it mounted
      Bun.spawnSync(['umount', '-l', dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
