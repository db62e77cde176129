/** `invoicing contracts create|list|show|countersign` and `business update --embed-origins`: the owner's side of contracts from the terminal. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { aClient, Tenant } from '../support/app';
import { runCli, useCliApp } from '../support/cli';

const ctx = useCliApp();
const { cli } = ctx;

const business = () => String(ctx.t.businessId);

async function aClientOf(t: Tenant): Promise<number> {
  return (await t.api.post('/clients', aClient())).body.client.id;
}

async function aContract(): Promise<any> {
  const clientId = await aClientOf(ctx.t);
  return (await ctx.t.api.post('/contracts', { title: 'Terms', client_id: clientId, body: 'We agree.' })).body.contract;
}

/** How many contracts the tenant's mode has. */
async function contractCount(): Promise<number> {
  return (await ctx.t.api.get('/contracts?per_page=1')).body.meta.total;
}

describe('invoicing contracts create', () => {
  test('when a contract is created with --json, then it prints the contract as GET /contracts/{id} shows it', async () => {
    // Arrange
    const clientId = await aClientOf(ctx.t);

    // Act
    const res = await cli('contracts', 'create', '--business', business(), '--mode', 'test', '--client', String(clientId), '--title', 'Website redesign', '--body', 'We build the site by May 1.', '--json');

    // Assert
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({ type: 'contract', title: 'Website redesign', client_id: clientId, body: 'We build the site by May 1.', amount: null, status: 'pending', livemode: false, signatures: [] });
    expect((await ctx.t.api.get(`/contracts/${printed.id}`)).body.contract).toEqual(printed);
  });

  test('when a proposal with an amount is created for people, then it prints its id, status and the signing and embed URLs, which open the signing page', async () => {
    // Arrange
    const clientId = await aClientOf(ctx.t);

    // Act
    const res = await cli('contracts', 'create', '--business', business(), '--mode', 'test', '--client', String(clientId), '--type', 'proposal', '--title', 'Retainer', '--body', 'Monthly support.', '--amount', '1500');

    // Assert
    expect(res.code).toBe(0);
    const [, id] = /^Created test proposal (\d+): Retainer, for client \d+, 1500\.00 USD$/m.exec(res.stdout) ?? [];
    expect(id).toBeDefined();
    const contract = (await ctx.t.api.get(`/contracts/${id}`)).body.contract;
    expect(contract).toMatchObject({ type: 'proposal', amount: 1500, currency: 'USD' });
    expect(res.stdout).toContain(`Status:      pending\nSigning URL: ${contract.signing_url}\nEmbed URL:   ${contract.embed_url}\n`);
    const page = await fetch(`${ctx.app.url}${new URL(contract.signing_url).pathname}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Retainer');
  });

  test('when the text is read with --body-file, from a file or from standard input (-), then it is kept exactly as written', async () => {
    // Arrange
    const clientId = String(await aClientOf(ctx.t));
    const text = 'Terms of service\n\n  1. We deliver.\n  2. You pay — in 30 days.\n';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-body-'));
    const file = path.join(dir, 'terms.txt');
    fs.writeFileSync(file, text);
    const args = ['contracts', 'create', '--business', business(), '--mode', 'test', '--client', clientId, '--title', 'Terms', '--json'];

    // Act
    const fromFile = await cli(...args, '--body-file', file);
    const fromStdin = await runCli(ctx.app.databaseUrl, [...args, '--body-file', '-'], {}, 20_000, undefined, text);

    // Assert
    expect(fromFile.code).toBe(0);
    expect(fromStdin.code).toBe(0);
    expect((await ctx.t.api.get(`/contracts/${JSON.parse(fromFile.stdout).id}`)).body.contract.body).toBe(text);
    expect((await ctx.t.api.get(`/contracts/${JSON.parse(fromStdin.stdout).id}`)).body.contract.body).toBe(text);
    fs.rmSync(dir, { recursive: true });
  });

  test('when it is created in live mode, then it is a live contract of the live client', async () => {
    // Arrange
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const clientId = await aClientOf(live);

    // Act
    const res = await cli('contracts', 'create', '--business', business(), '--mode', 'live', '--client', String(clientId), '--title', 'Live terms', '--body', 'Live.', '--amount', '10.5', '--currency', 'eur', '--json');

    // Assert
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({ livemode: true, amount: 10.5, currency: 'EUR' });
    expect((await live.api.get(`/contracts/${printed.id}`)).body.contract).toEqual(printed);
  });

  test.each([
    ['a blank body', ['--body', '   '], /--body\b.*: must not be blank/],
    ['an unknown type', ['--body', 'Text', '--type', 'memo'], /--type\b.*: must be one of \[contract, proposal\]/],
    ['an amount with a decimal comma', ['--body', 'Text', '--amount', '12,50'], /--amount must be a positive decimal amount with a dot, e\.g\. 12\.50, not "12,50"/],
    ['an amount with more decimals than the currency has', ['--body', 'Text', '--amount', '12.505'], /--amount "12\.505": USD amounts have at most 2 decimals/],
    ['an unknown currency', ['--body', 'Text', '--amount', '12', '--currency', 'XYZ'], /--currency\b.*: must be an ISO 4217 code such as USD/],
    ['both --body and --body-file', ['--body', 'Text', '--body-file', 'terms.txt'], /give either --body or --body-file, not both/],
    ['a --body-file that does not exist', ['--body-file', '/nonexistent/terms.txt'], /--body-file: cannot read "\/nonexistent\/terms\.txt": no such file/],
    ['no text at all', [], /missing required option: --body \(or --body-file\)/],
    ['an empty title', ['--body', 'Text', '--title', ''], /missing required option: --title/],
    ['a client id that is not a number', ['--body', 'Text', '--client', 'jane'], /--client must be a positive integer/],
    ['an unknown mode', ['--body', 'Text', '--mode', 'sandbox'], /--mode must be test or live/],
  ])('when given %s, then it exits 2 naming the option and creates nothing', async (_case, args, message) => {
    // Arrange
    const clientId = String(await aClientOf(ctx.t));
    const before = await contractCount();

    // Act
    const res = await cli('contracts', 'create', '--business', business(), '--mode', 'test', '--client', clientId, '--title', 'Terms', ...args);

    // Assert
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(await contractCount()).toBe(before);
  });

  test('when no option is given and there is no terminal, then it exits 2 naming every required one', async () => {
    const res = await cli('contracts', 'create');

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('missing required options: --business, --mode, --client, --title, --body (or --body-file)');
  });

  test("when the client is another business's, then it exits 1 naming the client and the business, and creates nothing", async () => {
    // Arrange
    const other = await ctx.app.tenant();
    const theirs = await aClientOf(other);
    const before = await contractCount();

    // Act
    const res = await cli('contracts', 'create', '--business', business(), '--mode', 'test', '--client', String(theirs), '--title', 'Terms', '--body', 'Text');

    // Assert
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`error: --client ${theirs} is not a client of business ${business()} in test mode\n`);
    expect(await contractCount()).toBe(before);
  });

  test('when the business does not exist, then it exits 1 naming it', async () => {
    const res = await cli('contracts', 'create', '--business', '999999', '--mode', 'test', '--client', '1', '--title', 'Terms', '--body', 'Text');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });
});

describe('invoicing contracts list', () => {
  test('when a business has contracts in both modes, then it lists both, and --mode and --client narrow the list', async () => {
    // Arrange
    const owner = await ctx.app.tenant();
    const live = await ctx.app.tenant({ mode: 'live', businessId: owner.businessId });
    const [jane, sam] = [await aClientOf(owner), await aClientOf(owner)];
    const forJane = (await owner.api.post('/contracts', { title: 'Jane terms', client_id: jane, body: 'A' })).body.contract;
    const forSam = (await owner.api.post('/contracts', { title: 'Sam proposal', client_id: sam, body: 'B', type: 'proposal', amount: 99.5 })).body.contract;
    const liveOne = (await live.api.post('/contracts', { title: 'Live terms', client_id: await aClientOf(live), body: 'C' })).body.contract;
    const list = (...args: string[]) => cli('contracts', 'list', '--business', String(owner.businessId), ...args);

    // Act
    const all = await list('--json');
    const testOnly = await list('--mode', 'test', '--json');
    const samOnly = await list('--client', String(sam), '--json');
    const table = await list();

    // Assert
    expect(JSON.parse(all.stdout)).toEqual({ data: [liveOne, forJane, forSam], more: false });
    expect(JSON.parse(testOnly.stdout)).toEqual({ data: [forJane, forSam], more: false });
    expect(JSON.parse(samOnly.stdout)).toEqual({ data: [forSam], more: false });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+MODE\s+TYPE\s+TITLE\s+CLIENT\s+AMOUNT\s+STATUS\s+CREATED$/);
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(new RegExp(`^${forSam.id}\\s+test\\s+proposal\\s+Sam proposal\\s+${sam}\\s+99\\.50 USD\\s+pending\\s+\\d{4}-`));
  });

  test('when a business has no contracts, then it says so', async () => {
    const empty = await ctx.app.tenant();

    const res = await cli('contracts', 'list', '--business', String(empty.businessId));

    expect(res.code).toBe(0);
    expect(res.stdout).toBe('No contracts\n');
  });

  test('when --business is missing and there is no terminal, then it exits 2 naming it', async () => {
    const res = await cli('contracts', 'list');

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('missing required option: --business');
  });

  test('when the business does not exist, then it exits 1 naming it', async () => {
    const res = await cli('contracts', 'list', '--business', '999999');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });
});

describe('invoicing contracts show', () => {
  test('when a countersigned contract is shown, then it prints its status, signing links, signatures and text; --json as the API shows it', async () => {
    // Arrange
    const contract = await aContract();
    await cli('contracts', 'countersign', String(contract.id), '--name', 'Ada Lovelace');

    // Act
    const human = await cli('contracts', 'show', String(contract.id));
    const json = await cli('contracts', 'show', String(contract.id), '--json');

    // Assert
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Contract ${contract.id} (test): Terms\n`);
    expect(human.stdout).toContain('Status:       partially_signed\n');
    expect(human.stdout).toContain(`Signing URL:  ${contract.signing_url}\n`);
    expect(human.stdout).toMatch(/Signatures:\n {2}PARTY\s+NAME\s+SIGNED\s+DOCUMENT SHA-256\n {2}business\s+Ada Lovelace\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+[0-9a-f]{64}\n/);
    expect(human.stdout).toMatch(/\n\nWe agree\.\n$/);
    expect(JSON.parse(json.stdout)).toEqual((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract);
  });

  test('when the contract does not exist, then it exits 1 naming its id', async () => {
    const res = await cli('contracts', 'show', '999999');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Contract 999999 not found/);
  });

  test('when the id is not a number, then it exits 2', async () => {
    const res = await cli('contracts', 'show', 'latest');

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('contract id must be a positive integer');
  });
});

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

  test('when the contract does not exist, then it exits 1 naming its id', async () => {
    const res = await cli('contracts', 'countersign', '999999', '--name', 'Ada Lovelace');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Contract 999999 not found/);
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
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/embed origin/);
    expect(reset.code).toBe(0);
    expect(await framing()).toContain('frame-ancestors *');
  });
});
