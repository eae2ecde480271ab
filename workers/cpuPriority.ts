import fs from 'node:fs';
import os from 'node:os';

export interface CpuPriority {
  /** The process's own nice value now. */
  nice: number;
  /** Its scheduling autogroup as /proc/self/autogroup shows it (name and nice), or null where there is none. */
  autogroup: string | null;
}

/**
 * WORKER_NICE: lower this process's CPU priority so that web processes on the same host are served
 * first. A nice value alone is not enough on Linux: with autogrouping (sched(7), on by default)
 * the scheduler first shares the CPU between autogroups, one per session, and a nice value ranks a
 * thread only against threads of its own group. A worker started in a session of its own (its own
 * service, `setsid`) would keep a full group's share whatever its nice value; so when this process
 * leads its session, its autogroup gets the same nice value. When it shares a session with other
 * processes (one supervisor starting web and worker, the benchmark) the group is left alone: its
 * nice would slow the web processes too. Raising a nice value needs no privilege. CPU cgroups
 * (systemd's CPUWeight=, container CPU shares) replace autogroups; there the weight is set
 * outside (docs/production.md).
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
