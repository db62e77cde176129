import { createCipheriv, randomBytes } from 'node:crypto';
import { SealedPlace, SecretBox, SecretBoxError } from '../../server/keys/secret-box';

const key = randomBytes(32);
const box = new SecretBox(key, 'webhook_secret');
const SECRET = 'whsec_0123456789abcdef';
const HERE: SealedPlace = { table: 'api_keys', column: 'webhook_secret', id: 7, businessId: 3 };

/** The sealed value with one byte of part `index` (1 IV, 2 tag, 3 ciphertext) flipped, still canonical base64url. */
function flipByte(sealed: string, index: 1 | 2 | 3): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index], 'base64url');
  bytes[0] ^= 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('SecretBox', () => {
  test('when a value is sealed, then it opens to the same text and the sealed text is v2.<iv>.<tag>.<ciphertext> without it', () => {
    const sealed = box.seal(SECRET, HERE);

    expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET);
    expect(box.open(sealed, HERE)).toBe(SECRET);
  });

  test('when unicode and empty texts are sealed, then they round-trip', () => {
    expect(box.open(box.seal('clé secrète ✓ 🔑', HERE), HERE)).toBe('clé secrète ✓ 🔑');
    expect(box.open(box.seal('', HERE), HERE)).toBe('');
  });

  test('when the same text is sealed twice, then the IVs and ciphertexts differ', () => {
    const one = box.seal(SECRET, HERE).split('.');
    const two = box.seal(SECRET, HERE).split('.');

    expect(two[1]).not.toBe(one[1]);
    expect(two[3]).not.toBe(one[3]);
  });

  test.each([
    [1, 'IV'],
    [2, 'tag'],
    [3, 'ciphertext'],
  ] as const)('when a byte of part %s (%s) is altered, then open throws', (index, _what) => {
    const sealed = box.seal(SECRET, HERE);

    expect(() => box.open(flipByte(sealed, index), HERE)).toThrow(SecretBoxError);
    expect(() => box.open(flipByte(sealed, index), HERE)).toThrow(/altered/);
  });

  test('when a part is truncated, padded with other characters or not base64url, then open throws', () => {
    const [v, iv, tag, ct] = box.seal(SECRET, HERE).split('.');

    for (const bad of [
      [v, iv, tag.slice(0, 16), ct],
      [v, iv.slice(1), tag, ct],
      [v, iv, tag, ct.slice(0, -1)],
      [v, iv, tag, `${ct}=`],
      [v, iv, tag, `${ct}+`],
      [v, iv, tag],
      ['v1', iv, tag, ct],
    ]) {
      expect(() => box.open(bad.join('.'), HERE)).toThrow(SecretBoxError);
    }
  });

  test('when a value is in clear text (no v2 prefix), then it is refused, not passed through', () => {
    expect(() => box.open(SECRET, HERE)).toThrow(/not in the v2/);
  });

  test('when a value is opened under another key, then it throws', () => {
    const other = new SecretBox(randomBytes(32), 'webhook_secret');

    expect(() => other.open(box.seal(SECRET, HERE), HERE)).toThrow(/another application key/);
  });

  test('when a value is opened for another purpose, then it throws', () => {
    const otherPurpose = new SecretBox(key, 'smtp_password');

    expect(() => otherPurpose.open(box.seal(SECRET, HERE), HERE)).toThrow(SecretBoxError);
  });

  test.each([
    ['another row', { ...HERE, id: 8 }],
    ['another business', { ...HERE, businessId: 4 }],
    ['no business', { ...HERE, businessId: null }],
    ['another column', { ...HERE, column: 'webhook_secret_sealed' }],
    ['another table', { ...HERE, table: 'oauth_apps' }],
  ])('when a value is opened in %s, then it throws: it opens only where it was sealed', (_where, place) => {
    const sealed = box.seal(SECRET, HERE);

    expect(() => box.open(sealed, place)).toThrow(/copied from another row, column or business/);
  });

  test('when the driver gives a row id as text ("7"), then the value opens as with the number', () => {
    const sealed = box.seal(SECRET, HERE);

    expect(box.open(sealed, { ...HERE, id: '7' as unknown as number, businessId: '3' as unknown as number })).toBe(SECRET);
  });

  test('when a value sealed before binding (v1, purpose only) is read, then open refuses it and openUnbound opens it', () => {
    // Arrange: v1 as sealed before 20261125140000: associated data "v1:<purpose>"
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from('v1:webhook_secret'));
    const ciphertext = Buffer.concat([cipher.update(SECRET, 'utf8'), cipher.final()]);
    const v1 = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');

    // Act + Assert
    expect(() => box.open(v1, HERE)).toThrow(/not in the v2/);
    expect(box.openUnbound(v1)).toBe(SECRET);
    expect(() => new SecretBox(key, 'gateway_secret').openUnbound(v1)).toThrow(SecretBoxError);
  });

  test('when the key is not 32 bytes, then the box refuses it', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32-byte key/);
    expect(() => new SecretBox(Buffer.alloc(0))).toThrow(/32-byte key/);
  });
});
