import { displayParts, generateKey, hashKey, looksLikeKey, sameHash } from '../../server/keys/token';

describe('API key values', () => {
  test('when keys are generated, then they have the mode prefix, 40 base62 characters and never repeat', () => {
    const keys = Array.from({ length: 1000 }, () => generateKey('live'));

    expect(keys.every((k) => /^svc_live_[0-9A-Za-z]{40}$/.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(1000);
  });

  test('when a key is hashed, then the hash is its SHA-256 and compares in constant time', () => {
    const key = generateKey('test');

    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(sameHash(hashKey(key), hashKey(key))).toBe(true);
    expect(sameHash(hashKey(key), hashKey(`${key}x`))).toBe(false);
    expect(sameHash(hashKey(key), 'abcd')).toBe(false);
  });

  test('when a key is displayed, then only its prefix and last four show', () => {
    const key = 'svc_test_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn';

    expect(displayParts(key)).toEqual({ prefix: 'svc_test_ABCD', last4: 'klmn' });
  });

  test.each(['svc_test_short', 'sk_test_' + 'a'.repeat(40), 'svc_prod_' + 'a'.repeat(40), 'svc_test_' + 'a'.repeat(39) + '!'])(
    'when the token is %s, then it does not look like a key',
    (token) => {
      expect(looksLikeKey(token)).toBe(false);
    },
  );
});
