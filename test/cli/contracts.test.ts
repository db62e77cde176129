/** `invoicing contracts countersign` and `business update --embed-origins`: the owner's side of signing, across the process boundary. */
import { aClient } from '../support/app';
import { useCliApp } from '../support/cli';

const ctx = useCliApp();
const { cli } = ctx;

async function aContract(): Promise<any> {
  const client = await ctx.t.api.post('/clients', aClient());
  return (await ctx.t.api.post('/contracts', { title: 'Terms', client_id: client.body.client.id, body: 'We agree.' })).body.contract;
}

describe('invoicing contracts countersign', () => {
  test('when the business countersigns with --json, then it prints the contract with the business signature', async () => {
    const contract = await aContract();

    const res = await cli('contracts', 'countersign', String(contract.id), '--name', 'Ada Lovelace', '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      id: contract.id,
      status: 'partially_signed',
      signatures: [{ party: 'business', name: 'Ada Lovelace', signed_at: expect.any(String), document_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }],
    });
  });

  test('when the contract does not exist, then it exits 1 saying so', async () => {
    const res = await cli('contracts', 'countersign', '999999', '--name', 'Ada Lovelace');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Contract not found/);
  });
});

describe('invoicing business update --embed-origins', () => {
  test('when origins are given, then embed_url may be framed by them only; * allows any again', async () => {
    const contract = await aContract();
    const framing = async () => (await fetch(`${ctx.app.url}${new URL(contract.embed_url).pathname}`)).headers.get('content-security-policy');

    const set = await cli('business', 'update', String(ctx.t.businessId), '--embed-origins', 'https://shop.example, https://www.shop.example');
    const narrowed = await framing();
    const bad = await cli('business', 'update', String(ctx.t.businessId), '--embed-origins', 'https://shop.example/path');
    const reset = await cli('business', 'update', String(ctx.t.businessId), '--embed-origins', '*');

    expect(set.code).toBe(0);
    expect(narrowed).toMatch(/frame-ancestors https:\/\/shop\.example https:\/\/www\.shop\.example$/);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/embed origin/);
    expect(reset.code).toBe(0);
    expect(await framing()).toContain('frame-ancestors *');
  });
});
