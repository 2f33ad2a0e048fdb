import Bowser from 'bowser';

/** "Chrome 120 on macOS" from a User-Agent, with a maintained parser (bowser). */
export function deviceLabel(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const { browser, os } = Bowser.parse(userAgent);
  const name = [browser.name, browser.version?.split('.')[0]].filter(Boolean).join(' ');
  const system = [os.name, os.versionName ?? os.version].filter(Boolean).join(' ');
  if (!name && !system) return 'Unknown device';
  return system ? `${name || 'Unknown browser'} on ${system}` : name;
}
