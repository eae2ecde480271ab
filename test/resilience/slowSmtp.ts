import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/**
 * An SMTP server that takes a message in full and then withholds its answer to DATA until the
 * test releases it: the sender is frozen exactly in the at-most-once window (the server has the
 * message, the sender does not know). Every message it took is in `received`, answered or not.
 */
export interface SlowSmtp {
  url: string;
  received: { to: string[]; raw: string }[];
  /** Hold the answer to every DATA from now on (until releaseAll). */
  hold: () => void;
  /** Number of DATA answers currently withheld. */
  heldCount: () => number;
  releaseAll: () => void;
  close: () => Promise<void>;
}

export async function startSlowSmtp(): Promise<SlowSmtp> {
  const received: SlowSmtp['received'] = [];
  const held: (() => void)[] = [];
  let holding = false;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        if (holding) held.push(() => callback());
        else callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  const releaseAll = () => {
    holding = false;
    for (const answer of held.splice(0)) {
      try {
        answer();
      } catch {
        /* the client is gone */
      }
    }
  };
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    hold: () => {
      holding = true;
    },
    heldCount: () => held.length,
    releaseAll,
    close: () =>
      new Promise<void>((r) => {
        releaseAll();
        server.close(() => r());
      }),
  };
}
