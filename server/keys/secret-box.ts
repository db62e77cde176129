/**
 * Seals short secrets that must be readable again (webhook signing secrets) with AES-256-GCM under the
 * application key. Stored text: `v1.<iv>.<tag>.<ciphertext>`, each part base64url without padding,
 * a random 12-byte IV per value and a 16-byte tag. The purpose (e.g. 'webhook_secret') is bound as
 * associated data, so a value sealed for one column does not open as another.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
/** How every sealed value starts: text without it was never sealed (e.g. clear text from before sealing). */
export const SEALED_PREFIX = `${VERSION}.`;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export class SecretBoxError extends Error {}

/** Strict base64url: rejects other characters and non-canonical text (e.g. altered padding bits). */
function decodePart(text: string, what: string): Buffer {
  const bytes = BASE64URL.test(text) ? Buffer.from(text, 'base64url') : undefined;
  if (!bytes || bytes.toString('base64url') !== text) throw new SecretBoxError(`Cannot open sealed value: its ${what} is not base64url`);
  return bytes;
}

export class SecretBox {
  private readonly key: Buffer;
  private readonly aad: Buffer;

  constructor(key: Buffer, readonly purpose = 'webhook_secret') {
    if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
      throw new SecretBoxError(`SecretBox needs a ${KEY_BYTES}-byte key, got ${Buffer.isBuffer(key) ? key.length : typeof key}`);
    }
    if (!purpose) throw new SecretBoxError('SecretBox needs a purpose');
    this.key = Buffer.from(key);
    this.aad = Buffer.from(`${VERSION}:${purpose}`, 'utf8');
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.aad);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** The clear text; throws SecretBoxError for anything that is not a v1 value sealed by this key for this purpose. */
  open(sealed: string): string {
    const parts = typeof sealed === 'string' ? sealed.split('.') : [];
    if (parts.length !== 4 || parts[0] !== VERSION) {
      throw new SecretBoxError(`Cannot open sealed value: not in the ${VERSION}.<iv>.<tag>.<ciphertext> format`);
    }
    const iv = decodePart(parts[1], 'IV');
    const tag = decodePart(parts[2], 'tag');
    const ciphertext = decodePart(parts[3], 'ciphertext');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SecretBoxError(`Cannot open sealed value: its IV or tag has the wrong length`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(this.aad);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        `Cannot open sealed ${this.purpose}: it was altered, or sealed under another application key (APP_SECRET_KEY) or for another purpose`,
      );
    }
  }
}
