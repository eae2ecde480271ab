import fs from 'node:fs';
import os from 'node:os';

export interface CpuPriority {
  /** The process's own nice value now. */
  nice: number;
  /** Its scheduling autogroup as /proc/self/autogroup shows it (name and nice), or null where there is none. */
  autogroup: string | null;
}

/**
 * WORKER_NICE: lower this process's CPU priority so web processes on the same host are served
 * first. With Linux autogrouping (sched(7)) a nice value only ranks threads within their session's
 * group, so a process that leads its own session also sets its autogroup's nice; one that shares a
 * session (a supervisor starting web and worker) leaves the group alone, which would slow the web
 * processes too. Under CPU cgroups the weight is set outside (docs/production.md).
 */
export function lowerCpuPriority(nice: number): CpuPriority {
  os.setPriority(nice);
  if (leadsOwnSession()) {
    try {
      fs.writeFileSync('/proc/self/autogroup', String(nice));
    } catch {
      // No autogroups (another OS, a kernel without them): the nice value is all there is.
    }
  }
  return currentCpuPriority();
}

export const currentCpuPriority = (): CpuPriority => ({ nice: os.getPriority(), autogroup: readAutogroup() });

function leadsOwnSession(): boolean {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name: state, ppid, pgrp, session.
    const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    return session === process.pid;
  } catch {
    return false;
  }
}

function readAutogroup(): string | null {
  try {
    return fs.readFileSync('/proc/self/autogroup', 'utf8').trim();
  } catch {
    return null;
  }
}
