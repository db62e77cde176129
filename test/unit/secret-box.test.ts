import { randomBytes } from 'node:crypto';
import { SecretBox, SecretBoxError } from '../../server/keys/secret-box';

const key = randomBytes(32);
const box = new SecretBox(key, 'webhook_secret');
const SECRET = 'whsec_0123456789abcdef';

/** The sealed value with one byte of part `index` (1 IV, 2 tag, 3 ciphertext) flipped, still canonical base64url. */
function flipByte(sealed: string, index: 1 | 2 | 3): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index], 'base64url');
  bytes[0] ^= 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('SecretBox', () => {
  test('when a value is sealed, then it opens to the same text and the sealed text is v1.<iv>.<tag>.<ciphertext> without it', () => {
    const sealed = box.seal(SECRET);

    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET);
    expect(box.open(sealed)).toBe(SECRET);
  });

  test('when unicode and empty texts are sealed, then they round-trip', () => {
    expect(box.open(box.seal('clé secrète ✓ 🔑'))).toBe('clé secrète ✓ 🔑');
    expect(box.open(box.seal(''))).toBe('');
  });

  test('when the same text is sealed twice, then the IVs and ciphertexts differ', () => {
    const one = box.seal(SECRET).split('.');
    const two = box.seal(SECRET).split('.');

    expect(two[1]).not.toBe(one[1]);
    expect(two[3]).not.toBe(one[3]);
  });

  test.each([
    [1, 'IV'],
    [2, 'tag'],
    [3, 'ciphertext'],
  ] as const)('when a byte of part %s (%s) is altered, then open throws', (index, _what) => {
    const sealed = box.seal(SECRET);

    expect(() => box.open(flipByte(sealed, index))).toThrow(SecretBoxError);
    expect(() => box.open(flipByte(sealed, index))).toThrow(/altered/);
  });

  test('when a part is truncated, padded with other characters or not base64url, then open throws', () => {
    const [v, iv, tag, ct] = box.seal(SECRET).split('.');

    for (const bad of [
      [v, iv, tag.slice(0, 16), ct],
      [v, iv.slice(1), tag, ct],
      [v, iv, tag, ct.slice(0, -1)],
      [v, iv, tag, `${ct}=`],
      [v, iv, tag, `${ct}+`],
      [v, iv, tag],
      ['v2', iv, tag, ct],
    ]) {
      expect(() => box.open(bad.join('.'))).toThrow(SecretBoxError);
    }
  });

  test('when a value is in clear text (no v1 prefix), then it is refused, not passed through', () => {
    expect(() => box.open(SECRET)).toThrow(/not in the v1/);
  });

  test('when a value is opened under another key, then it throws', () => {
    const other = new SecretBox(randomBytes(32), 'webhook_secret');

    expect(() => other.open(box.seal(SECRET))).toThrow(/another application key/);
  });

  test('when a value is opened for another purpose, then it throws', () => {
    const otherPurpose = new SecretBox(key, 'smtp_password');

    expect(() => otherPurpose.open(box.seal(SECRET))).toThrow(SecretBoxError);
  });

  test('when the key is not 32 bytes, then the box refuses it', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32-byte key/);
    expect(() => new SecretBox(Buffer.alloc(0))).toThrow(/32-byte key/);
  });
});
