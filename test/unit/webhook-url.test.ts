import { resolvedAddressProblem, webhookUrlProblem } from '../../server/keys/webhook-url';

describe('webhook URL rules', () => {
  test.each([
    'http://127.0.0.1/hook',
    'http://localhost:8080/hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[::ffff:10.0.0.1]/hook',
    'http://0.0.0.0/hook',
    'http://100.64.0.1/hook',
    'http://[fe80::1]/hook',
    'http://240.0.0.1/hook',
    // IPv6 forms that carry or reach a private IPv4 address, or are no ordinary receiver's address.
    'http://[::127.0.0.1]/hook',
    'http://[::10.0.0.1]/hook',
    'http://[::8.8.8.8]/hook',
    'http://[::ffff:7f00:1]/hook',
    'http://[::ffff:0:127.0.0.1]/hook',
    'http://[64:ff9b::10.0.0.1]/hook',
    'http://[64:ff9b::127.0.0.1]/hook',
    'http://[64:ff9b:1::a00:1]/hook',
    'http://[2002:7f00:1::1]/hook',
    'http://[2002:808:808::1]/hook',
    'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook',
    'http://[fec0::1]/hook',
    'http://[100::1]/hook',
    'http://[2001:db8::1]/hook',
    'http://[::1:0:0:1]/hook',
    'http://[4000::1]/hook',
  ])('when the URL is %s, then it is refused unless private addresses are allowed', (url) => {
    expect(webhookUrlProblem(url, false)).toMatch(/private/);
    expect(webhookUrlProblem(url, true)).toBeNull();
  });

  test.each(['ftp://example.com/x', 'not a url', 'https://user:pass@example.com/x'])('when the URL is %s, then it is refused', (url) => {
    expect(webhookUrlProblem(url, true)).not.toBeNull();
  });

  test.each(['https://hooks.example.com/in?x=1', 'http://8.8.8.8/hook', 'http://[2606:4700::1111]/hook', 'http://[::ffff:8.8.8.8]/hook', 'http://[64:ff9b::8.8.8.8]/hook'])(
    'when the URL is public (%s), then it is accepted',
    (url) => {
      expect(webhookUrlProblem(url, false)).toBeNull();
    },
  );

  test('when a host name resolves to a loopback address, then it is refused unless private addresses are allowed', async () => {
    expect(await resolvedAddressProblem('http://localhost:8080/hook', false)).toMatch(/private address/);
    expect(await resolvedAddressProblem('http://localhost:8080/hook', true)).toBeNull();
  });

  test('when a host name does not resolve, then it is accepted: the address is checked at each delivery', async () => {
    expect(await resolvedAddressProblem('https://no-such-host.invalid/hook', false)).toBeNull();
  });
});
