// The public surface of the keys module: other modules, the composition root and the read models import only this.
export { signingKeyEvents } from './events.ts';
export type { SigningKeyEvent } from './events.ts';
export { ID_TOKEN_ALG, KeyRing } from './key-ring.ts';
export { registerKeyRoutes } from './routes.ts';
export { keysRateLimitRules } from './rate-limits.ts';
