/** `invoicing trigger`: every event type can be made to happen, for real, in test mode. */
import { systemActor } from '../../server/auth/actor';
import { EVENT_TYPES } from '../../server/events/model';
import { TRIGGERS } from '../../cli/triggers';
import { runCli, useCliApp } from '../support/cli';
import { freePort } from '../support/net';

const ctx = useCliApp();

describe('trigger', () => {
  test.each(EVENT_TYPES)('when %s is triggered, then the business logs that event with its payload', async (type) => {
    const t = await ctx.app.tenant();

    await TRIGGERS[type].fire(ctx.app.server.services, systemActor('cli', { businessId: t.businessId, livemode: false }));

    const res = await t.api.get(`/events?type=${type}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toEqual(expect.objectContaining({ type, business_id: t.businessId, livemode: false }));
  });

  test('when --list is given, then every event type is listed with what its trigger does', async () => {
    const res = await ctx.cli('trigger', '--list', '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).map((row: { event: string }) => row.event)).toEqual([...EVENT_TYPES]);
  });

  test('when an event type is triggered from the command line, then it fires for the business named', async () => {
    const res = await runCli(ctx.app.databaseUrl, ['trigger', 'invoice.paid', '--business', String(ctx.t.businessId), '--json'], { BASE_URL: ctx.app.url });

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(expect.objectContaining({ event: 'invoice.paid', business_id: ctx.t.businessId }));
    const paid = await ctx.t.api.get('/events?type=invoice.paid');
    expect(paid.body.data).toHaveLength(1);
  });

  test('when the server does not answer, then it says so, exits 1 and makes nothing', async () => {
    const before = await ctx.t.api.get('/events?type=invoice.sent');
    const closed = `http://127.0.0.1:${await freePort()}`;

    const res = await runCli(ctx.app.databaseUrl, ['trigger', 'invoice.sent', '--business', String(ctx.t.businessId)], { BASE_URL: closed });

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^error: the server at ${closed}/api/v1/partner does not answer: start it with .*; nothing was triggered\\n$`));
    expect((await ctx.t.api.get('/events?type=invoice.sent')).body.data).toEqual(before.body.data);
  });

  test('when the event type is unknown, then it is a usage error naming the types', async () => {
    const res = await ctx.cli('trigger', 'invoice.exploded');

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('invoice.created');
  });
});
