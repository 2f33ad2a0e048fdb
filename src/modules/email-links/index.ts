// The public surface of the email-links module: other modules, the composition root and the read models import only this.
export { emailLinkCommands, mapLinkRace } from './commands.ts';
export type { EmailLinkCommands } from './commands.ts';
export { invalidLink, linkStillCurrent } from './decider.ts';
export type { LinkAccount } from './decider.ts';
export { errorStatuses } from './errors.ts';
export { EMAIL_LINK_LIFETIME_SECONDS, emailLinkEvents } from './events.ts';
export type { EmailLinkEvent, EmailLinkPurpose } from './events.ts';
