/**
 * Seals short secrets that must be readable again (webhook signing secrets, gateway credentials) with
 * AES-256-GCM under the application key. Stored text: `v2.<iv>.<tag>.<ciphertext>`, each part
 * base64url without padding, a random 12-byte IV per value and a 16-byte tag. The associated data
 * binds the value to its place: the purpose (e.g. 'webhook_secret'), the table, column and id of its
 * row, and the business it belongs to. A value copied to another column, another row or another
 * business's row does not open there, so a database writer who swaps ciphertexts gains nothing.
 *
 * `v1` values (before 20261125140000) were bound to their purpose only; that migration re-seals
 * them with `openUnbound`, and `open` no longer accepts them.
 *
 * A row's id exists only once it is inserted: callers insert the row without the secret, then seal
 * and store it in the same transaction (nobody else sees the row in between).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v2';
/** Values sealed before they were bound to their row: opened only by the migration that re-seals them. */
const UNBOUND_VERSION = 'v1';
/** How every sealed value starts: text without it was never sealed (e.g. clear text from before sealing). */
export const SEALED_PREFIX = `${VERSION}.`;
export const UNBOUND_PREFIX = `${UNBOUND_VERSION}.`;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export class SecretBoxError extends Error {}

/** Where a sealed value is stored: it opens there only. `businessId` null: a row of no business (an OAuth app). */
export interface SealedPlace {
  table: string;
  column: string;
  id: number;
  businessId: number | null;
}

function describePlace(place: SealedPlace): string {
  return `${place.table}.${place.column} of row ${place.id}`;
}

/** Strict base64url: rejects other characters and non-canonical text (e.g. altered padding bits). */
function decodePart(text: string, what: string): Buffer {
  const bytes = BASE64URL.test(text) ? Buffer.from(text, 'base64url') : undefined;
  if (!bytes || bytes.toString('base64url') !== text) throw new SecretBoxError(`Cannot open sealed value: its ${what} is not base64url`);
  return bytes;
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer, readonly purpose = 'webhook_secret') {
    if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
      throw new SecretBoxError(`SecretBox needs a ${KEY_BYTES}-byte key, got ${Buffer.isBuffer(key) ? key.length : typeof key}`);
    }
    if (!purpose) throw new SecretBoxError('SecretBox needs a purpose');
    this.key = Buffer.from(key);
  }

  seal(plain: string, place: SealedPlace): string {
    return this.encrypt(plain, VERSION, this.boundTo(place));
  }

  /** The clear text; throws SecretBoxError for anything that is not a v2 value sealed by this key for this purpose and place. */
  open(sealed: string, place: SealedPlace): string {
    return this.decrypt(sealed, VERSION, this.boundTo(place), `sealed ${this.purpose} in ${describePlace(place)}`);
  }

  /** A v1 value, bound to its purpose only: for the migration that re-seals them in their places. */
  openUnbound(sealed: string): string {
    return this.decrypt(sealed, UNBOUND_VERSION, this.unboundAad(), `sealed ${this.purpose}`);
  }

  /** Seals as v1 did: only that migration's `down` writes such values again. */
  sealUnbound(plain: string): string {
    return this.encrypt(plain, UNBOUND_VERSION, this.unboundAad());
  }

  private unboundAad(): Buffer {
    return Buffer.from(`${UNBOUND_VERSION}:${this.purpose}`, 'utf8');
  }

  private encrypt(plain: string, version: string, aad: Buffer): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [version, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /**
   * JSON: no choice of names or ids can make two places read alike. Ids are read as numbers whatever
   * the driver gave (mysql2 returns a DECIMAL, such as a UNION of an id and NULL, as text).
   */
  private boundTo(place: SealedPlace): Buffer {
    const id = Number(place.id);
    const businessId = place.businessId === null ? null : Number(place.businessId);
    if (!Number.isSafeInteger(id) || (businessId !== null && !Number.isSafeInteger(businessId))) {
      throw new SecretBoxError(`Cannot bind a sealed ${this.purpose} to ${describePlace(place)}: its ids are not integers`);
    }
    return Buffer.from(JSON.stringify([VERSION, this.purpose, place.table, place.column, id, businessId]), 'utf8');
  }

  private decrypt(sealed: string, version: string, aad: Buffer, what: string): string {
    const parts = typeof sealed === 'string' ? sealed.split('.') : [];
    if (parts.length !== 4 || parts[0] !== version) {
      throw new SecretBoxError(`Cannot open ${what}: not in the ${version}.<iv>.<tag>.<ciphertext> format`);
    }
    const iv = decodePart(parts[1], 'IV');
    const tag = decodePart(parts[2], 'tag');
    const ciphertext = decodePart(parts[3], 'ciphertext');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SecretBoxError(`Cannot open ${what}: its IV or tag has the wrong length`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        `Cannot open ${what}: it was altered, copied from another row, column or business, or sealed under another application key (APP_SECRET_KEY)`,
      );
    }
  }
}
