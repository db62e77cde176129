/**
 * The checks of a party's legal identity (server/businesses/legal-identity.ts) and the snapshots an
 * invoice takes of the seller and the buyer: pure, so tested here once; the HTTP and CLI tests show
 * the messages where they are read.
 */
import { TSchema } from '@sinclair/typebox';
import Ajv2020 from 'ajv/dist/2020';
import Joi from 'joi';
import { bicField, compactIban, ibanChecksumHolds, ibanField, peppolIdField, taxIdField } from '../../server/businesses/legal-identity';
import { Business } from '../../server/businesses/model';
import { Seller } from '../../server/businesses/schema';
import { toSellerSnapshot } from '../../server/businesses/view';
import { Buyer, ClientView } from '../../server/clients/schema';
import { toBuyerSnapshot } from '../../server/clients/view';

/** Whether `value` matches the response shape `schema`, as the document's validator reads it. */
function matches(schema: TSchema, value: unknown): boolean {
  return new Ajv2020({ strict: true, allowUnionTypes: true }).compile(JSON.parse(JSON.stringify(schema)) as object)(value);
}

function check(field: Joi.Schema, value: unknown): { value?: unknown; error?: string } {
  const result = Joi.object({ field }).validate({ field: value }, { errors: { wrap: { label: false } } });
  return result.error ? { error: result.error.details[0].message } : { value: (result.value as { field: unknown }).field };
}

describe('IBAN', () => {
  // The registry's own examples, one per format family.
  test.each([
    'DE89 3704 0044 0532 0130 00',
    'GB29 NWBK 6016 1331 9268 19',
    'FR14 2004 1010 0505 0001 3M02 606',
    'NL91 ABNA 0417 1643 00',
    'BE68 5390 0754 7034',
    'NO93 8601 1117 947',
    'MT84 MALT 0110 0001 2345 MTLC AST0 01S',
    'LC55 HEMM 0001 0001 0012 0012 0002 3015',
    'AT61 1904 3002 3457 3201',
    'CH93 0076 2011 6238 5295 7',
    'ES91 2100 0418 4502 0005 1332',
    'IT60 X054 2811 1010 0000 0123 456',
  ])('when %s is given, then it is accepted and kept without spaces', (iban) => {
    expect(check(ibanField, iban)).toEqual({ value: compactIban(iban) });
  });

  test('when any one digit of an IBAN is changed, then the mod-97 check refuses it', () => {
    const iban = 'DE89370400440532013000';
    for (let i = 2; i < iban.length; i += 1) {
      for (const digit of '0123456789') {
        if (digit === iban[i]) continue;
        expect(ibanChecksumHolds(iban.slice(0, i) + digit + iban.slice(i + 1))).toBe(false);
      }
    }
  });

  test.each([
    ['no check digits', 'DEXX370400440532013000', /a country code, two check digits/],
    ['a country without IBANs', 'US12345678901234567890', /US is not a country of the IBAN registry/],
    ['a character out of the alphabet', 'DE89-3704-0044-0532-0130-00', /a country code, two check digits/],
    ['one character too many', 'DE893704004405320130001', /one of DE has 22 characters, not 23/],
  ])('when an IBAN has %s, then it is refused saying why', (_case, iban, message) => {
    expect(check(ibanField, iban).error).toMatch(message);
  });
});

describe('BIC', () => {
  test.each([['deutdeff', 'DEUTDEFF'], ['DEUTDEFF500', 'DEUTDEFF500'], ['COBA DE FF XXX', 'COBADEFFXXX']])('when %s is given, then it is kept as %s', (bic, kept) => {
    expect(check(bicField, bic)).toEqual({ value: kept });
  });

  test.each(['DEUTDEF', 'DEUTDEFF5', 'DEUT1EFF', 'DEUTZZFF'])('when %s is given, then it is refused', (bic) => {
    expect(check(bicField, bic).error).toMatch(/^field must be a BIC/);
  });
});

describe('tax ID', () => {
  test.each([
    ['ATU12345678'],
    ['BE0123456749'],
    ['BG123456789'],
    ['CY12345678L'],
    ['CZ12345678'],
    ['DE123456789'],
    ['DK12345678'],
    ['EE123456789'],
    ['EL123456789'],
    ['ESX1234567X'],
    ['FI12345678'],
    ['FRXX123456789'],
    ['HR12345678901'],
    ['HU12345678'],
    ['IE1234567WA'],
    ['IE1A23456W'],
    ['IT12345678901'],
    ['LT123456789012'],
    ['LU12345678'],
    ['LV12345678901'],
    ['MT12345678'],
    ['NL123456789B01'],
    ['PL1234567890'],
    ['PT123456789'],
    ['RO1234567890'],
    ['SE123456789001'],
    ['SI12345678'],
    ['SK1234567890'],
    ['XI123456789'],
    ['XIGD123'],
  ])('when the EU VAT number %s is given, then it is accepted', (taxId) => {
    expect(check(taxIdField, taxId)).toEqual({ value: taxId });
  });

  test.each([
    ['AT12345678', /AT VAT number: AT must be followed by U and 8 digits/],
    ['DE12345678', /DE VAT number/],
    ['EL1234567890', /EL VAT number/],
    ['NL123456789A01', /NL VAT number/],
    ['SE123456789012', /SE VAT number/],
    ['XI12345', /XI VAT number/],
  ])('when %s is given, then it is refused with its country\'s shape', (taxId, message) => {
    expect(check(taxIdField, taxId).error).toMatch(message);
  });

  test.each([['12-3456789'], ['GB123456789'], ['GR123456789'], ['CHE-123.456.789 MWST'], ['ITALIA 1']])(
    'when %s, which starts with no EU VAT prefix and digit, is given, then it is kept as written',
    (taxId) => {
      expect(check(taxIdField, taxId)).toEqual({ value: taxId });
    },
  );
});

describe('Peppol ID', () => {
  test.each(['0088:7300010000001', '9930:DE123456789', '0204:991-12345-67'])('when %s is given, then it is accepted', (id) => {
    expect(check(peppolIdField, id)).toEqual({ value: id });
  });

  test.each(['7300010000001', '88:7300010000001', '0088:', '0088:73 00', 'ABCD:123'])('when %s is given, then it is refused', (id) => {
    expect(check(peppolIdField, id).error).toMatch(/SCHEME:ID/);
  });
});

describe('snapshots', () => {
  test('when the business has no legal name, then the seller is named by the business name, and the snapshot is a Seller', () => {
    const business = Object.assign(new Business(), {
      name: 'Acme',
      legal_name: null,
      country: 'DE',
      tax_id: 'DE123456789',
      ...Object.fromEntries(['address_line1', 'address_line2', 'city', 'postal_code', 'state', 'registration_number', 'email', 'phone', 'iban', 'bic', 'invoice_footer', 'peppol_id'].map((f) => [f, null])),
    });

    const seller = toSellerSnapshot(business);

    expect(seller).toMatchObject({ legal_name: 'Acme', country: 'DE', tax_id: 'DE123456789', iban: null });
    expect(Object.keys(seller)).toEqual(Object.keys(Seller.properties));
    expect(matches(Seller, seller)).toBe(true);
    expect(matches(Seller, { ...seller, country: 'Germany' })).toBe(false);
  });

  test('when a client is snapshotted, then the buyer has its name, address and tax identity and is a Buyer', () => {
    const client: ClientView = {
      id: 1,
      name: 'Jane',
      email: 'jane@example.com',
      phone: '1',
      company: 'Jane GmbH',
      address: 'Hauptstraße 1',
      city: 'Berlin',
      postal_code: '10115',
      state: null,
      country: 'DE',
      tax_id: 'DE123456789',
      tax_exempt: 'reverse',
      buyer_reference: '04011000-12345-34',
      peppol_id: '9930:DE123456789',
      metadata: {},
      livemode: false,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };

    const buyer = toBuyerSnapshot(client);

    expect(buyer).toEqual({
      name: 'Jane',
      company: 'Jane GmbH',
      email: 'jane@example.com',
      address: 'Hauptstraße 1',
      city: 'Berlin',
      postal_code: '10115',
      state: null,
      country: 'DE',
      tax_id: 'DE123456789',
      tax_exempt: 'reverse',
      buyer_reference: '04011000-12345-34',
      peppol_id: '9930:DE123456789',
    });
    expect(Object.keys(buyer)).toEqual(Object.keys(Buyer.properties));
    expect(matches(Buyer, buyer)).toBe(true);
  });
});
