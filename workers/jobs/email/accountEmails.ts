import { UnrecoverableError, type Job } from 'bullmq';
import { db } from '../../../shared/db';
import { config } from '../../../shared/config';
import { logger } from '../../../shared/logger';
import { smtpTransport, isTemporarySmtpFailure } from '../../../shared/providers/mail/smtpTransport';
import { passwordResetMailOf } from '../../../shared/commands/account';
import { accountNoticeMail, passwordResetMail, type MailText } from '../../../shared/domain/accountEmails';
import { PASSWORD_RESET_TTL_MS } from '../../../shared/auth/passwordReset';
import { findAccountRecipient } from '../../../shared/queries/users';
import type { SendAccountNoticePayload, SendPasswordResetEmailPayload } from '../../../shared/jobs/catalog';

/**
 * The service's own e-mails about a user's account (docs/auth.md): the password-reset link and
 * the notices of changes. No delivery rows as for invoices: the job is the record, at least once.
 * A retry after the server accepted a message sends it again; the Message-ID is the job's, so the
 * copies are recognisable as one message, and a reset e-mail carries the same link both times.
 */
export async function sendPasswordResetEmailJob(job: Job<SendPasswordResetEmailPayload>) {
  const mail = await db().transaction((trx) => passwordResetMailOf({ trx }, job.data.resetId));
  // Nothing to send is the common answer to an unknown e-mail: no log line that could list them.
  if (!mail) return { status: 'skipped' };
  const text = passwordResetMail({ name: mail.name, link: mail.link, validMinutes: PASSWORD_RESET_TTL_MS / 60_000 });
  return send(job, mail.to, text, `password-reset-${job.data.resetId}`);
}

export async function sendAccountNoticeJob(job: Job<SendAccountNoticePayload>) {
  const { tenantId, userId, notice, ref } = job.data;
  const user = await findAccountRecipient(db(), tenantId, userId);
  if (!user) return { status: 'skipped', reason: 'no-such-user' };
  return send(job, user.email, accountNoticeMail(notice, { name: user.name }), `account-notice-${ref}`);
}

async function send(job: Job, to: string, mail: MailText, key: string) {
  const smtpUrl = config().smtp.url;
  if (!smtpUrl) throw new UnrecoverableError('E-mail is not configured on this server (SMTP_URL is not set)');
  const from = config().smtp.from;
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost';
  try {
    const info = await smtpTransport(smtpUrl).sendMail({ from, to, subject: mail.subject, text: mail.text, messageId: `<${key}@${domain}>` });
    return { status: 'sent', messageId: info.messageId };
  } catch (err) {
    const message = String((err as { response?: string }).response ?? (err as Error).message).slice(0, 1000);
    if (isTemporarySmtpFailure(err)) throw err;
    logger.warn({ jobId: job.id, smtp: message }, 'account e-mail refused by the SMTP server');
    throw new UnrecoverableError(message);
  }
}
