// The public surface of the settings module: other modules, the composition root and the read models import only this.
export { cachedSettings } from './cache.ts';
export { settingsCommands } from './commands.ts';
export { settingsDecider } from './decider.ts';
export type { SecuritySettings } from './defaults.ts';
export { settingsEvents } from './events.ts';
export type { SettingsEvent } from './events.ts';
export { settingsQueries } from './provider.ts';
export type { SettingsProvider } from './provider.ts';
export { registerSettingsRoutes } from './routes.ts';
export { flatten } from './sections.ts';
export type { NestedSettings } from './sections.ts';
