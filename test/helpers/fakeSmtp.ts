import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/** A local SMTP server (the smtp-server package) that records messages and can refuse them. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface FakeSmtp {
  url: string;
  received: ReceivedMail[];
  /** Answer the next n DATA commands with this SMTP code (4xx temporary, 5xx permanent). */
  failNext: (n: number, code: number, message?: string) => void;
  close: () => Promise<void>;
}

export async function startFakeSmtp(): Promise<FakeSmtp> {
  const received: ReceivedMail[] = [];
  let failures: { n: number; code: number; message: string } = { n: 0, code: 0, message: '' };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (failures.n > 0) {
          failures.n--;
          const err = Object.assign(new Error(failures.message), { responseCode: failures.code });
          return callback(err);
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    failNext: (n, code, message = code >= 500 ? 'Mailbox unavailable' : 'Try again later') => (failures = { n, code, message }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
