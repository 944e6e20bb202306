/** Imported first by main.ts: the server execs itself with its runtime settings before the rest loads (runtime.ts). */
import { relaunchForServer } from './runtime.ts'

relaunchForServer()
