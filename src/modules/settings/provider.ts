import { DEFAULT_SECURITY_SETTINGS, type SecuritySettings } from './defaults.ts';

/** The security settings in force for a tenant. */
export interface SettingsProvider {
  forTenant(tenant: string): Promise<SecuritySettings>;
}

/**
 * Until tenants can change their settings (the security-settings aggregate), every tenant runs
 * on the spec's defaults.
 */
export const defaultSettingsProvider: SettingsProvider = {
  forTenant: async () => DEFAULT_SECURITY_SETTINGS,
};
