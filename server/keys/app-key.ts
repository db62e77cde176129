/**
 * The application key that seals secrets at rest (see secret-box.ts). In order of precedence:
 * APP_SECRET_KEY (required with MySQL, the same on every server and CLI); on the embedded database,
 * the app-secret.key file beside the database file, so every process of that database finds the
 * same key whatever its working directory; else a key earlier versions generated into
 * ./data/app-secret.key, copied beside the database; else a new key generated there (mode 0600,
 * never overwritten). Losing the key makes every stored webhook secret unreadable.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { APP_SECRET_KEY_REQUIRED, Config, ConfigError } from '../config';
import { dialectOf, sqliteFilename } from '../db/connection';

export const APP_KEY_BYTES = 32;
export const APP_KEY_FILE = 'app-secret.key';
/** Where earlier versions kept the generated key: ./data of the directory the process started in. */
export const LEGACY_APP_KEY_DIR = './data';

/** 32 bytes from base64 (standard or url-safe, padding optional) or 64 hex digits; null when it is neither. */
export function decodeAppKey(text: string): Buffer | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return null;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === APP_KEY_BYTES ? bytes : null;
}

export function loadAppKey(config: Pick<Config, 'appSecretKey' | 'databaseUrl'>, legacyDir = LEGACY_APP_KEY_DIR): Buffer {
  if (config.appSecretKey !== undefined) {
    const key = decodeAppKey(config.appSecretKey);
    if (!key) throw new ConfigError(`APP_SECRET_KEY must be ${APP_KEY_BYTES} bytes in base64 or hex (generate one with: openssl rand -base64 32)`);
    return key;
  }
  if (dialectOf(config.databaseUrl) === 'mysql') throw new ConfigError(APP_SECRET_KEY_REQUIRED);
  const database = sqliteFilename(config.databaseUrl);
  // An in-memory database keeps no secret past the process, so neither does its key.
  if (database === ':memory:') return randomBytes(APP_KEY_BYTES);
  const file = path.join(path.dirname(path.resolve(database)), APP_KEY_FILE);
  if (!fs.existsSync(file)) {
    const legacy = path.join(legacyDir, APP_KEY_FILE);
    writeKeyFile(file, fs.existsSync(legacy) ? readKeyFile(legacy) : randomBytes(APP_KEY_BYTES));
  }
  return readKeyFile(file);
}

/** 'wx' never replaces a file, even one another process wrote a moment ago: that one wins and is read after. */
function writeKeyFile(file: string, key: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

function readKeyFile(file: string): Buffer {
  const key = decodeAppKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new ConfigError(`${file} does not hold a ${APP_KEY_BYTES}-byte base64 key; restore it from a backup, or set APP_SECRET_KEY`);
  return key;
}

/** Said at start-up when the stored secrets were sealed under another key than the one loaded. */
export const STORED_SECRETS_UNOPENABLE =
  'stored webhook secrets cannot be opened with this application key: set APP_SECRET_KEY to the key that sealed them ' +
  '(or restore the app-secret.key file beside the database); until then webhooks cannot be signed';
