/**
 * The application key that seals secrets at rest (see secret-box.ts): APP_SECRET_KEY when set, otherwise
 * a key generated once into <dataDir>/app-secret.key (mode 0600, never overwritten) and read back on
 * later runs. The file is a convenience for the embedded first run; production sets APP_SECRET_KEY,
 * the same on every server process. Losing the key makes every stored webhook secret unreadable.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Config, ConfigError } from '../config';

export const APP_KEY_BYTES = 32;
export const APP_KEY_FILE = 'app-secret.key';

/** 32 bytes from base64 (standard or url-safe, padding optional) or 64 hex digits; null when it is neither. */
export function decodeAppKey(text: string): Buffer | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === APP_KEY_BYTES ? bytes : null;
}

export function loadAppKey(config: Pick<Config, 'appSecretKey'>, dataDir = './data'): Buffer {
  if (config.appSecretKey !== undefined) {
    const key = decodeAppKey(config.appSecretKey);
    if (!key) throw new ConfigError(`APP_SECRET_KEY must be ${APP_KEY_BYTES} bytes in base64 or hex (generate one with: openssl rand -base64 32)`);
    return key;
  }
  const file = path.join(dataDir, APP_KEY_FILE);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      // 'wx' never replaces a file, even one another process wrote a moment ago: that one wins and is read below.
      fs.writeFileSync(file, `${randomBytes(APP_KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = decodeAppKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new ConfigError(`${file} does not hold a ${APP_KEY_BYTES}-byte base64 key; restore it from a backup, or set APP_SECRET_KEY`);
  return key;
}
