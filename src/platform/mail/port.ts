/** An e-mail to one recipient. `text` is always present; `html` is optional. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Outgoing e-mail: SMTP when SMTP_URL is set, the log otherwise (decisions.md, Running). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
