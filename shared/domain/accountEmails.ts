/**
 * The texts of the service's own e-mails to a user about their account (docs/auth.md): the
 * password-reset link and the notices of changes someone made to the account. Plain text,
 * German first and English below, like the rest of the service's user-facing wording. No
 * tenant data: they are sent by the service, not by the tenant.
 */
export type AccountNotice = 'password-changed' | 'two-factor-reset' | 'reactivated';
export const ACCOUNT_NOTICES: AccountNotice[] = ['password-changed', 'two-factor-reset', 'reactivated'];

export interface MailText {
  subject: string;
  text: string;
}

export function passwordResetMail(p: { name: string; link: string; validMinutes: number }): MailText {
  return {
    subject: 'Passwort zurücksetzen / Reset your password',
    text: [
      `Hallo ${p.name},`,
      '',
      `mit diesem Link legen Sie ein neues Passwort fest. Er gilt ${p.validMinutes} Minuten und nur einmal:`,
      p.link,
      '',
      'Wenn Sie das nicht angefordert haben, ignorieren Sie diese Nachricht; Ihr Passwort bleibt unverändert.',
      '',
      '---',
      `Use this link to set a new password. It works once, for ${p.validMinutes} minutes:`,
      p.link,
      'If you did not ask for it, ignore this message; your password stays as it is.',
      '',
    ].join('\n'),
  };
}

const NOTICES: Record<AccountNotice, { subject: string; de: string; en: string }> = {
  'password-changed': {
    subject: 'Ihr Passwort wurde geändert / Your password was changed',
    de: 'das Passwort Ihres Kontos wurde soeben geändert, und alle Sitzungen wurden beendet.',
    en: 'The password of your account was just changed, and every session was ended.',
  },
  'two-factor-reset': {
    subject: 'Zweiter Faktor zurückgesetzt / Second factor reset',
    de: 'ein Administrator hat den zweiten Faktor Ihres Kontos (Authenticator-App, Passkeys, Wiederherstellungscodes) entfernt. Richten Sie nach der nächsten Anmeldung einen neuen ein.',
    en: 'An administrator removed the second factor of your account (authenticator app, passkeys, recovery codes). Set up a new one after your next login.',
  },
  reactivated: {
    subject: 'Ihr Konto ist wieder aktiv / Your account is active again',
    de: 'ein Administrator hat Ihr Konto wieder aktiviert. Sie können sich wieder anmelden.',
    en: 'An administrator reactivated your account. You can log in again.',
  },
};

export function accountNoticeMail(notice: AccountNotice, p: { name: string }): MailText {
  const n = NOTICES[notice];
  return {
    subject: n.subject,
    text: [
      `Hallo ${p.name},`,
      '',
      n.de,
      'Wenn Sie das nicht erwartet haben, wenden Sie sich an den Administrator Ihres Unternehmens.',
      '',
      '---',
      n.en,
      "If you did not expect this, contact your company's administrator.",
      '',
    ].join('\n'),
  };
}
