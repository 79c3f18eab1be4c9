// The ☰ menu's "Desktop notifications" toggle: reads config.json `notifications` through the
// backend and writes the switched `enabled` back (the other settings are kept).
import * as backend from '../backend.js';
import { addError } from '../store.js';

/** The menu item, or null when the settings cannot be read (the menu opens without it). */
export async function notificationsItem() {
  let settings;
  try {
    settings = await backend.notificationSettings();
  } catch {
    return null;
  }
  return {
    label: 'Desktop notifications',
    testid: 'menu-notifications',
    checked: settings.enabled,
    run: () =>
      backend
        .setNotificationSettings({ ...settings, enabled: !settings.enabled })
        .catch((error) => addError('Could not change the notification settings', error)),
  };
}
