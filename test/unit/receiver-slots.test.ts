import { ReceiverSlots } from '../../server/webhooks/slots';

const A = 'https://a.example.com/hook';
const B = 'https://b.example.com/hook';

describe('the webhook worker\'s per-receiver slots', () => {
  test('when a receiver has its slots\' worth in flight, then no more of its deliveries start, while another receiver\'s do', () => {
    const slots = new ReceiverSlots({ slots: 4, perReceiver: 2 });
    for (const url of [A, A, A, B]) slots.hold(url);

    slots.startSending(A);
    slots.startSending(A);

    expect(slots.canSend(A)).toBe(false);
    expect(slots.canSend(B)).toBe(true);
    expect(slots.inFlight).toBe(2);
  });

  test('when every slot is in flight, then nothing starts until a send finishes', () => {
    const slots = new ReceiverSlots({ slots: 2, perReceiver: 2 });
    slots.startSending(A);
    slots.startSending(B);

    expect(slots.canSend(B)).toBe(false);
    expect(slots.hasFreeSlot()).toBe(false);
    slots.finishSending(A);
    expect(slots.canSend(B)).toBe(true);
    expect(slots.hasFreeSlot()).toBe(true);
  });

  test('when a receiver holds twice its slots, then it is saturated: claims skip it, and deliveries from the commit are not taken for it', () => {
    const slots = new ReceiverSlots({ slots: 10, perReceiver: 2 });
    for (let i = 0; i < 4; i += 1) slots.hold(A);
    slots.hold(B);

    expect(slots.saturated()).toEqual([A]);
    expect(slots.takes(A, 0)).toBe(false);
    expect(slots.takes(B, 0)).toBe(true);
    expect(slots.everyReceiverFull()).toBe(false);
    for (let i = 0; i < 3; i += 1) slots.hold(B);
    expect(slots.everyReceiverFull()).toBe(true);
  });

  test('when as many deliveries wait as there are slots, then no new one is taken from the commit', () => {
    const slots = new ReceiverSlots({ slots: 3, perReceiver: 2 });

    expect(slots.takes(A, 2)).toBe(true);
    expect(slots.takes(A, 3)).toBe(false);
  });

  test('when claimed candidates exceed a receiver\'s room, then the oldest within it are chosen and the rest passed over', () => {
    const slots = new ReceiverSlots({ slots: 10, perReceiver: 1 });
    slots.hold(A);
    const candidates = [
      { id: 1, url: A },
      { id: 2, url: B },
      { id: 3, url: A },
      { id: 4, url: B },
      { id: 5, url: B },
    ];

    const { chosen, passedOver } = slots.choose(candidates);

    expect(chosen.map(({ id }) => id)).toEqual([1, 2, 4]);
    expect(passedOver).toBe(true);
    expect(slots.choose([{ id: 6, url: B }]).passedOver).toBe(false);
  });

  test('when deliveries are released, then their receiver has room again and forgets its count at zero', () => {
    const slots = new ReceiverSlots({ slots: 10, perReceiver: 1 });
    slots.hold(A);
    slots.hold(A);
    expect(slots.roomFor(A)).toBe(false);
    expect(slots.saturated()).toEqual([A]);

    slots.release(A);
    expect(slots.roomFor(A)).toBe(true);
    slots.release(A);
    expect(slots.saturated()).toEqual([]);
    expect(slots.everyReceiverFull()).toBe(false);
  });

  test('the slots a claim may fill are those neither in flight nor taken by deliveries held for one', () => {
    const slots = new ReceiverSlots({ slots: 8, perReceiver: 2 });
    slots.startSending(A);

    expect(slots.free(3)).toBe(4);
  });
});
