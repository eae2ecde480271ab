import { afterAll, beforeAll } from 'vitest';
import type { QueueName } from '../../shared/queues';
import { startWorkers, type RunningWorkers } from '../../workers/worker';

/** Real BullMQ workers for these queues while the test file runs (no recurring schedules). */
export function useWorkers(queues: QueueName[]): void {
  let workers: RunningWorkers | undefined;
  beforeAll(async () => {
    workers = await startWorkers({ queues, schedule: false });
  });
  afterAll(async () => workers?.close());
}
