/** The payment reminder e-mail: the amount due, the payment link, and where the invoice stands on the reminder's day. Pure. */
import { reminderEmail, ReminderEmailInput } from '../../server/invoices/email';

function aReminder(overrides: Partial<ReminderEmailInput> = {}): ReminderEmailInput {
  return {
    businessName: 'Acme Ltd',
    clientName: 'Jane Doe',
    clientEmail: 'jane@example.com',
    number: 'INV-000007',
    amountDue: '$1,234.50',
    dueDate: '2026-12-31',
    paymentUrl: 'https://pay.example.com/pay/tok_123?x=1&y=2',
    offsetDays: -3,
    ...overrides,
  };
}

describe('reminderEmail', () => {
  test.each([
    [-3, 'is due on 2026-12-31'],
    [0, 'is due today, 2026-12-31'],
    [7, 'is overdue since 2026-12-31'],
  ])('when the offset is %i, then subject and both parts say the invoice %s, with the amount due and the payment link', (offsetDays, standing) => {
    // Act
    const email = reminderEmail(aReminder({ offsetDays }));

    // Assert
    expect(email.to).toBe('jane@example.com');
    expect(email.subject).toBe(`Reminder: invoice INV-000007 from Acme Ltd ${standing}`);
    for (const part of [email.text, email.html]) {
      expect(part).toContain(standing);
      expect(part).toContain('$1,234.50');
      expect(part).toContain('INV-000007');
    }
    expect(email.text).toContain('https://pay.example.com/pay/tok_123?x=1&y=2');
    expect(email.html).toMatch(/<a href="https:\/\/pay\.example\.com\/pay\/tok_123\?x=1&amp;y=2"[^>]*>Pay this invoice<\/a>/);
    expect(email.attachments).toBeUndefined();
  });

  test('when names contain markup, then the HTML part shows them as text', () => {
    // Act
    const email = reminderEmail(aReminder({ businessName: 'Tom & Jerry', clientName: '<script>alert(1)</script>' }));

    // Assert
    expect(email.html).not.toContain('<script>');
    expect(email.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(email.html).toContain('Tom &amp; Jerry');
  });

  test('when the payment link is not an http(s) URL, then no e-mail is made', () => {
    expect(() => reminderEmail(aReminder({ paymentUrl: 'javascript:alert(1)' }))).toThrow(/http\(s\)/);
  });
});
