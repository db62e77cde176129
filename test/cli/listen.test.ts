/**
 * `invoicing webhooks listen`: the CLI process follows the running server's events and forwards them
 * to a local receiver, signed as real deliveries. The process boundary (signals, stdout) is what is
 * tested, so the CLI runs as a child; a TCP proxy between it and the server plays a server restart.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { aDraft, TEST_APP_SECRET_KEY, useApp } from '../support/app';
import { BIN, requireBuild } from '../support/cli';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { signBody } from '../../server/webhooks/signing';
import { systemActor } from '../../server/auth/actor';
import { TRIGGERS } from '../../cli/triggers';

const ctx = useApp();

interface Listener {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  exited: Promise<number | null>;
}

function startListener(args: string[]): Listener {
  const child = spawn(process.execPath, [BIN, 'webhooks', 'listen', ...args], {
    env: { PATH: process.env.PATH, DATABASE_URL: ctx.app.databaseUrl, APP_SECRET_KEY: TEST_APP_SECRET_KEY },
  });
  const lines: string[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => lines.push(`stderr: ${chunk.toString('utf8').trim()}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

const secretOf = (lines: string[]) => /whsec_[A-Za-z0-9_-]+/.exec(lines[0] ?? '')?.[0];

describe('webhooks listen', () => {
  let receiver: TestReceiver;
  let proxy: TcpProxy;
  let listener: Listener;

  beforeAll(async () => {
    requireBuild();
    receiver = await startReceiver();
    const port = Number(new URL(ctx.app.url).port);
    proxy = await startTcpProxy('127.0.0.1', port);
  });

  afterAll(async () => {
    if (listener && listener.child.exitCode === null) listener.child.kill('SIGKILL');
    await receiver.stop();
    await proxy.stop();
  });

  test('when an event happens, then it is forwarded to the local URL, signed with the printed secret, and logged in one line', async () => {
    // Arrange
    listener = startListener(['--forward-to', receiver.url, '--api-url', `http://127.0.0.1:${proxy.port}/api/v1/partner`, '--business', String(ctx.t.businessId)]);
    await eventually(() => secretOf(listener.lines) !== undefined && listener.lines.length >= 2, 15_000);

    // Act
    const draft = await aDraft(ctx.t);

    // Assert
    await eventually(() => receiver.received.length === 1, 10_000);
    const [forwarded] = receiver.received;
    expect(forwarded.body).toEqual(expect.objectContaining({ type: 'invoice.created', business_id: ctx.t.businessId, livemode: false }));
    expect(forwarded.body.data.invoice.id).toBe(draft.id);
    expect(forwarded.headers['x-service-signature']).toBe(signBody(forwarded.raw, secretOf(listener.lines)!));
    expect(forwarded.headers['x-service-event']).toBe('invoice.created');
    expect(forwarded.headers['x-service-delivery']).toMatch(/^listen-\d+-/);
    await eventually(() => listener.lines.some((line) => line.includes('invoice.created') && line.includes('[200]')), 5000);
  });

  test('when a contract is signed and a payment is received, then both events are forwarded (its own key reads every event type)', async () => {
    const before = receiver.received.length;
    const actor = systemActor('cli', { businessId: ctx.t.businessId, livemode: false });

    await TRIGGERS['contract.signed'].fire(ctx.app.server.services, actor);
    await TRIGGERS['payment.received'].fire(ctx.app.server.services, actor);

    await eventually(() => receiver.received.slice(before).some((r) => r.body.type === 'payment.received'), 15_000);
    expect(receiver.received.slice(before).map((r) => r.body.type)).toEqual(['contract.signed', 'invoice.created', 'invoice.sent', 'payment.received']);
  });

  test('when the server cannot be reached for a while, then the events committed meanwhile are forwarded once it answers, none lost', async () => {
    // Arrange
    const before = receiver.received.length;
    proxy.cut();

    // Act
    const drafts = [await aDraft(ctx.t), await aDraft(ctx.t)];
    await eventually(() => listener.lines.some((line) => line.startsWith('waiting for the server')), 10_000);
    proxy.restore();

    // Assert
    await eventually(() => receiver.received.length === before + 2, 15_000);
    expect(receiver.received.slice(before).map((r) => r.body.data.invoice.id)).toEqual(drafts.map((d) => d.id));
  });

  test('when it is stopped with Ctrl-C, then it exits cleanly and its temporary key no longer works', async () => {
    const keysBefore = await ctx.app.server.services.keys.list(ctx.t.businessId);

    listener.child.kill('SIGINT');

    expect(await listener.exited).toBe(0);
    const keys = await ctx.app.server.services.keys.list(ctx.t.businessId);
    expect(keys.filter((k) => k.status === 'revoked').length).toBeGreaterThan(keysBefore.filter((k) => k.status === 'revoked').length);
  });

  test('when it is given --key, then it signs with that key\'s webhook secret, so one handler verifies its and the server\'s deliveries; a key without a secret is refused', async () => {
    // Arrange: a key of the business with a webhook secret, and one without
    const KEY_SECRET = 'whsec_the_partners_own_secret_123';
    const signer = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['expenses:read'], webhookSecret: KEY_SECRET });
    const bare = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['expenses:read'] });
    const local = await startReceiver();
    try {
      const keyed = startListener(['--forward-to', local.url, '--key', String(signer.keyId), '--api-url', `http://127.0.0.1:${proxy.port}/api/v1/partner`]);
      await eventually(() => keyed.lines.length >= 2, 15_000);

      // Act
      await aDraft(ctx.t);
      await eventually(() => local.received.length === 1, 15_000);
      keyed.child.kill('SIGINT');
      await keyed.exited;
      const refused = startListener(['--print-json', '--key', String(bare.keyId), '--business', String(ctx.t.businessId)]);

      // Assert
      expect(keyed.lines[0]).toContain(`key ${signer.keyId}`);
      expect(keyed.lines.join('\n')).not.toContain(KEY_SECRET);
      expect(local.received[0].headers['x-service-signature']).toBe(signBody(local.received[0].raw, KEY_SECRET));
      expect(await refused.exited).toBe(2);
      expect(refused.lines.join('\n')).toContain('no webhook secret');
    } finally {
      await local.stop();
    }
  });

  test('when it is run twice for one business, then the signing secret is the same', async () => {
    const first = startListener(['--print-json', '--api-url', `http://127.0.0.1:${proxy.port}/api/v1/partner`, '--business', String(ctx.t.businessId)]);
    await eventually(() => secretOf(first.lines) !== undefined, 15_000);
    first.child.kill('SIGINT');
    await first.exited;
    const second = startListener(['--print-json', '--api-url', `http://127.0.0.1:${proxy.port}/api/v1/partner`, '--business', String(ctx.t.businessId)]);
    await eventually(() => secretOf(second.lines) !== undefined, 15_000);
    second.child.kill('SIGINT');
    await second.exited;

    expect(secretOf(second.lines)).toBe(secretOf(first.lines));
  });
});
