/**
 * The tax engine: properties over random invoices (checked against an independent BigInt
 * reckoning), a table of invoices computed by hand, and every field error it records.
 */
import fc from 'fast-check';
import { AmountProblem, MAX_MINOR_AMOUNT } from '../../server/money/amount';
import {
  computeTaxes,
  fromPercentageUnits,
  TaxBreakdownLine,
  TaxedInvoice,
  TaxExempt,
  TaxLineInput,
  TaxOptions,
  TaxRateTerms,
  toPercentageUnits,
} from '../../server/money/tax';

function aRate(id: number, percentage: number, terms: Partial<TaxRateTerms> = {}): TaxRateTerms {
  return {
    id,
    display_name: `VAT ${percentage} %`,
    percentage_units: toPercentageUnits(percentage),
    inclusive: false,
    category: percentage > 0 ? 'S' : 'Z',
    exemption_reason: null,
    ...terms,
  };
}

function compute(lines: TaxLineInput[], rates: TaxRateTerms[], options: Partial<TaxOptions> = {}): { result: TaxedInvoice; errors: Record<string, string[]> } {
  const errors = new Map<string, string[]>();
  const result = computeTaxes(lines, new Map(rates.map((rate) => [rate.id, rate])), { tax_exempt: 'none', caller_rounding: 0, ...options }, errors);
  return { result, errors: Object.fromEntries(errors) };
}

describe('toPercentageUnits and fromPercentageUnits', () => {
  test.each([
    [19, 190_000],
    [8.875, 88_750],
    [100, 1_000_000],
    [0, 0],
    [0.0001, 1],
    [7.7, 77_000],
  ])('when the percentage is %d, then it is %i units and back', (percentage, units) => {
    expect(toPercentageUnits(percentage)).toBe(units);
    expect(fromPercentageUnits(units)).toBe(percentage);
  });

  test.each([
    ['five decimals', 8.87501],
    ['below 0', -1],
    ['above 100', 100.0001],
    ['not finite', Number.NaN],
  ])('when the percentage has %s, then it is refused', (_case, percentage) => {
    expect(() => toPercentageUnits(percentage)).toThrow(AmountProblem);
  });
});

interface HandComputed {
  name: string;
  rates: TaxRateTerms[];
  lines: TaxLineInput[];
  options?: Partial<TaxOptions>;
  amounts_excluding_tax: number[];
  breakdown: Partial<TaxBreakdownLine>[];
  total_excluding_tax: number;
  total_tax: number;
  rounding_amount: number;
  total: number;
}

const handComputed: HandComputed[] = [
  {
    name: 'a German invoice has three lines at 19 %',
    // 2 × 12.50 = 25.00; 1 × 7.50; 1 × 3.50 → taxable 36.00; 19 % of 36.00 = 6.84, once for the rate.
    // Per line it would be 4.75 + 1.425→1.43 + 0.665→0.67 = 6.85: a cent more.
    rates: [aRate(1, 19)],
    lines: [
      { amount: 2500, tax_rate_ids: [1] },
      { amount: 750, tax_rate_ids: [1] },
      { amount: 350, tax_rate_ids: [1] },
    ],
    amounts_excluding_tax: [2500, 750, 350],
    breakdown: [{ tax_rate_id: 1, category: 'S', percentage_units: 190_000, taxable_amount: 3600, tax_amount: 684 }],
    total_excluding_tax: 3600,
    total_tax: 684,
    rounding_amount: 0,
    total: 4284, // 36.00 + 6.84
  },
  {
    name: 'an invoice mixes 7 % and 19 %',
    // 7 %: 2 × 9.95 = 19.90 + 4.35 = 24.25; 7 % of 24.25 = 1.6975 → 1.70.
    // 19 %: 14.99; 19 % of 14.99 = 2.8481 → 2.85.
    rates: [aRate(1, 7), aRate(2, 19)],
    lines: [
      { amount: 1990, tax_rate_ids: [1] },
      { amount: 1499, tax_rate_ids: [2] },
      { amount: 435, tax_rate_ids: [1] },
    ],
    amounts_excluding_tax: [1990, 1499, 435],
    breakdown: [
      { tax_rate_id: 1, taxable_amount: 2425, tax_amount: 170 },
      { tax_rate_id: 2, taxable_amount: 1499, tax_amount: 285 },
    ],
    total_excluding_tax: 3924,
    total_tax: 455, // 1.70 + 2.85
    rounding_amount: 0,
    total: 4379, // 39.24 + 4.55
  },
  {
    name: 'a JPY invoice (no decimals) has 1,234 yen at 10 %',
    // 10 % of ¥1,234 = 123.4 → ¥123.
    rates: [aRate(1, 10)],
    lines: [{ amount: 1234, tax_rate_ids: [1] }],
    amounts_excluding_tax: [1234],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 1234, tax_amount: 123 }],
    total_excluding_tax: 1234,
    total_tax: 123,
    rounding_amount: 0,
    total: 1357,
  },
  {
    name: 'a KWD invoice (three decimals) has 1.234 KWD at 5 %',
    // 1.234 KWD = 1234 fils; 5 % of 1234 = 61.7 → 62 fils = 0.062 KWD; total 1.296 KWD.
    rates: [aRate(1, 5)],
    lines: [{ amount: 1234, tax_rate_ids: [1] }],
    amounts_excluding_tax: [1234],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 1234, tax_amount: 62 }],
    total_excluding_tax: 1234,
    total_tax: 62,
    rounding_amount: 0,
    total: 1296,
  },
  {
    name: 'a New York invoice has 10.00 at 8.875 %',
    // 8.875 % of 10.00 = 0.8875 → 0.89.
    rates: [aRate(1, 8.875)],
    lines: [{ amount: 1000, tax_rate_ids: [1] }],
    amounts_excluding_tax: [1000],
    breakdown: [{ tax_rate_id: 1, percentage_units: 88_750, taxable_amount: 1000, tax_amount: 89 }],
    total_excluding_tax: 1000,
    total_tax: 89,
    rounding_amount: 0,
    total: 1089,
  },
  {
    name: 'three lines of 9.99 include 19 %',
    // Per line 9.99 × 100 / 119 = 8.3949… → 8.39 excluding tax; taxable 3 × 8.39 = 25.17.
    // 19 % of 25.17 = 4.7823 → 4.78, once; 25.17 + 4.78 = 29.95, but the client was quoted
    // 3 × 9.99 = 29.97: rounding_amount 0.02 keeps the total at 29.97.
    rates: [aRate(1, 19, { inclusive: true })],
    lines: [
      { amount: 999, tax_rate_ids: [1] },
      { amount: 999, tax_rate_ids: [1] },
      { amount: 999, tax_rate_ids: [1] },
    ],
    amounts_excluding_tax: [839, 839, 839],
    breakdown: [{ tax_rate_id: 1, inclusive: true, taxable_amount: 2517, tax_amount: 478 }],
    total_excluding_tax: 2517,
    total_tax: 478,
    rounding_amount: 2,
    total: 2997,
  },
  {
    name: 'a US invoice stacks 6.25 % state and 2.25 % county tax on the same lines',
    // Both rates tax 19.99 + 3 × 4.99 = 34.96 (the county does not tax the state's tax).
    // State: 6.25 % of 34.96 = 2.185 → 2.19 (half away from zero). County: 2.25 % of 34.96 = 0.7866 → 0.79.
    rates: [aRate(1, 6.25, { display_name: 'CA state' }), aRate(2, 2.25, { display_name: 'LA county' })],
    lines: [
      { amount: 1999, tax_rate_ids: [1, 2] },
      { amount: 1497, tax_rate_ids: [2, 1] },
    ],
    amounts_excluding_tax: [1999, 1497],
    breakdown: [
      { tax_rate_id: 1, display_name: 'CA state', taxable_amount: 3496, tax_amount: 219 },
      { tax_rate_id: 2, display_name: 'LA county', taxable_amount: 3496, tax_amount: 79 },
    ],
    total_excluding_tax: 3496,
    total_tax: 298, // 2.19 + 0.79
    rounding_amount: 0,
    total: 3794,
  },
  {
    name: 'a discount line of −5.00 is under the rate',
    // 49.99 − 5.00 = 44.99 taxable; 19 % of 44.99 = 8.5481 → 8.55.
    rates: [aRate(1, 19)],
    lines: [
      { amount: 4999, tax_rate_ids: [1] },
      { amount: -500, tax_rate_ids: [1] },
    ],
    amounts_excluding_tax: [4999, -500],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 4499, tax_amount: 855 }],
    total_excluding_tax: 4499,
    total_tax: 855,
    rounding_amount: 0,
    total: 5354,
  },
  {
    name: 'the buyer is under reverse charge',
    // The 19 % rate applies as AE at 0 %: 1,000.00 taxable, tax 0.
    rates: [aRate(1, 19)],
    lines: [{ amount: 100000, tax_rate_ids: [1] }],
    options: { tax_exempt: 'reverse' },
    amounts_excluding_tax: [100000],
    breakdown: [{ tax_rate_id: 1, category: 'AE', percentage_units: 0, taxable_amount: 100000, tax_amount: 0, exemption_reason: 'Reverse charge' }],
    total_excluding_tax: 100000,
    total_tax: 0,
    rounding_amount: 0,
    total: 100000,
  },
  {
    name: 'an exempt buyer is charged an inclusive 19 % price',
    // The rate applies as E at 0 %: 9.99 × 100 / 100 = 9.99 excluding tax (the price does not drop), tax 0.
    rates: [aRate(1, 19, { inclusive: true })],
    lines: [{ amount: 999, tax_rate_ids: [1] }],
    options: { tax_exempt: 'exempt' },
    amounts_excluding_tax: [999],
    breakdown: [{ tax_rate_id: 1, category: 'E', percentage_units: 0, inclusive: true, taxable_amount: 999, tax_amount: 0, exemption_reason: 'Exempt' }],
    total_excluding_tax: 999,
    total_tax: 0,
    rounding_amount: 0,
    total: 999,
  },
  {
    name: "a shop gives each line's 19 % tax, one within a cent of the line's own",
    // The lines' own taxes: 19 % of 25.00 = 4.75; of 7.50 = 1.425 → 1.43; of 3.50 = 0.665 → 0.67.
    // The shop's 4.76 is one cent off 4.75: accepted. Tax = 4.76 + 1.43 + 0.67 = 6.86 (once for the rate it would be 6.84).
    rates: [aRate(1, 19)],
    lines: [
      { amount: 2500, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 476 }] },
      { amount: 750, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 143 }] },
      { amount: 350, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 67 }] },
    ],
    amounts_excluding_tax: [2500, 750, 350],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 3600, tax_amount: 686 }],
    total_excluding_tax: 3600,
    total_tax: 686,
    rounding_amount: 0,
    total: 4286,
  },
  {
    name: "a shop gives each inclusive line's tax",
    // Each line's own tax: 9.99 − 8.39 = 1.60; tax = 3 × 1.60 = 4.80; 25.17 + 4.80 = 29.97: nothing to round.
    rates: [aRate(1, 19, { inclusive: true })],
    lines: [0, 1, 2].map(() => ({ amount: 999, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 160 }] })),
    amounts_excluding_tax: [839, 839, 839],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 2517, tax_amount: 480 }],
    total_excluding_tax: 2517,
    total_tax: 480,
    rounding_amount: 0,
    total: 2997,
  },
  {
    name: 'the caller gives a rounding_amount of −0.01',
    // 19 % of 19.99 = 3.7981 → 3.80; 19.99 + 3.80 = 23.79, but the shop charged 23.78: −0.01.
    rates: [aRate(1, 19)],
    lines: [{ amount: 1999, tax_rate_ids: [1] }],
    options: { caller_rounding: -1 },
    amounts_excluding_tax: [1999],
    breakdown: [{ tax_rate_id: 1, taxable_amount: 1999, tax_amount: 380 }],
    total_excluding_tax: 1999,
    total_tax: 380,
    rounding_amount: -1,
    total: 2378,
  },
  {
    name: 'no line has a rate',
    // 10.00 + 2.50 = 12.50, no tax: total = subtotal, as before taxes.
    rates: [],
    lines: [
      { amount: 1000, tax_rate_ids: [] },
      { amount: 250, tax_rate_ids: [] },
    ],
    amounts_excluding_tax: [1000, 250],
    breakdown: [],
    total_excluding_tax: 1250,
    total_tax: 0,
    rounding_amount: 0,
    total: 1250,
  },
];

describe('computeTaxes: invoices computed by hand', () => {
  test.each(handComputed)('when $name, then the totals are the hand-computed ones', (example) => {
    // Act
    const { result, errors } = compute(example.lines, example.rates, example.options);

    // Assert
    expect(errors).toEqual({});
    expect(result.lines.map((line) => line.amount_excluding_tax)).toEqual(example.amounts_excluding_tax);
    expect(result.tax_breakdown).toHaveLength(example.breakdown.length);
    expect(result.tax_breakdown).toMatchObject(example.breakdown);
    expect(result).toMatchObject({
      subtotal: example.lines.reduce((sum, line) => sum + line.amount, 0),
      total_excluding_tax: example.total_excluding_tax,
      total_tax: example.total_tax,
      rounding_amount: example.rounding_amount,
      total: example.total,
    });
  });
});

// --- Properties -------------------------------------------------------------------------------

const MILLION = 1_000_000n;

/** numerator / denominator (denominator > 0) rounded half away from zero: the reference, in BigInt. */
function roundedQuotient(numerator: bigint, denominator: bigint): bigint {
  const magnitude = numerator < 0n ? -numerator : numerator;
  const rounded = magnitude / denominator + (2n * (magnitude % denominator) >= denominator ? 1n : 0n);
  return numerator < 0n ? -rounded : rounded;
}

interface RandomInvoice {
  lines: TaxLineInput[];
  rates: TaxRateTerms[];
  options: TaxOptions;
}

/** The reference reckoning of one line, written apart from the engine. */
function referenceLine(line: TaxLineInput, rates: TaxRateTerms[], taxExempt: TaxExempt) {
  const lineRates = rates.filter((rate) => line.tax_rate_ids.includes(rate.id));
  const percentageOf = (rate: TaxRateTerms) => (taxExempt === 'none' ? BigInt(rate.percentage_units) : 0n);
  const inclusive = lineRates.find((rate) => rate.inclusive);
  const amount = BigInt(line.amount);
  const excludingTax = inclusive ? roundedQuotient(amount * MILLION, MILLION + percentageOf(inclusive)) : amount;
  const ownTax = (rate: TaxRateTerms) => (rate.inclusive ? amount - excludingTax : roundedQuotient(excludingTax * percentageOf(rate), MILLION));
  return { excludingTax, ownTax, lineRates, percentageOf };
}

function referenceBreakdown({ lines, rates, options }: RandomInvoice): { tax_rate_id: number; taxable_amount: number; tax_amount: number }[] {
  return rates
    .filter((rate) => lines.some((line) => line.tax_rate_ids.includes(rate.id)))
    .map((rate) => {
      const itsLines = lines.filter((line) => line.tax_rate_ids.includes(rate.id));
      const taxable = itsLines.reduce((sum, line) => sum + referenceLine(line, rates, options.tax_exempt).excludingTax, 0n);
      const shopTax = itsLines.every((line) => line.tax_amounts?.some((entry) => entry.tax_rate_id === rate.id));
      const tax = shopTax
        ? itsLines.reduce((sum, line) => sum + BigInt(line.tax_amounts!.find((entry) => entry.tax_rate_id === rate.id)!.amount), 0n)
        : roundedQuotient(taxable * referenceLine(itsLines[0], rates, options.tax_exempt).percentageOf(rate), MILLION);
      return { tax_rate_id: rate.id, taxable_amount: Number(taxable), tax_amount: Number(tax) };
    });
}

const aPercentage = fc.oneof(fc.constantFrom(0, 50_000, 70_000, 190_000, 200_000, 62_500, 22_500, 88_750, 1_000_000), fc.integer({ min: 0, max: 1_000_000 }));
// Mostly everyday amounts, some as large as an amount may be; negative ones are discount lines.
const anAmount = fc.oneof(fc.integer({ min: -5_000, max: 50_000 }), fc.integer({ min: -MAX_MINOR_AMOUNT, max: MAX_MINOR_AMOUNT }));

/** A valid invoice: all inclusive (one rate a line at most) or all exclusive (stacked up to 5), maybe with a shop's line taxes. */
const aValidInvoice: fc.Arbitrary<RandomInvoice> = fc
  .record({
    inclusive: fc.boolean(),
    percentages: fc.array(aPercentage, { minLength: 1, maxLength: 7 }),
    tax_exempt: fc.constantFrom<TaxExempt>('none', 'none', 'exempt', 'reverse'),
    shopGivesTax: fc.boolean(),
  })
  .chain(({ inclusive, percentages, tax_exempt, shopGivesTax }) => {
    const rates = percentages.map((units, index) => ({ ...aRate(index + 1, fromPercentageUnits(units)), inclusive }));
    const ids = rates.map((rate) => rate.id);
    const aLine = fc.record({
      amount: anAmount,
      tax_rate_ids: inclusive ? fc.subarray(ids, { maxLength: 1 }) : fc.shuffledSubarray(ids, { maxLength: Math.min(ids.length, 5) }),
      // How far the shop's tax for each of the line's rates is from the line's own (it may be a unit off).
      shopOffsets: fc.array(fc.integer({ min: -1, max: 1 }), { minLength: 5, maxLength: 5 }),
    });
    return fc
      .array(aLine, { minLength: 1, maxLength: 8 })
      .chain((lines) => fc.tuple(fc.constant(lines), fc.integer({ min: -lines.length, max: lines.length })))
      .map(([lines, callerRounding]): RandomInvoice => ({
        rates,
        options: { tax_exempt, caller_rounding: callerRounding },
        lines: lines.map(({ amount, tax_rate_ids, shopOffsets }) => {
          const line: TaxLineInput = { amount, tax_rate_ids };
          if (!shopGivesTax) return line;
          const { ownTax, lineRates } = referenceLine(line, rates, tax_exempt);
          // An exempt buyer's given tax must be 0 exactly; otherwise a unit either way is accepted.
          const offsetOf = (position: number) => (tax_exempt === 'none' ? shopOffsets[position] : 0);
          return { ...line, tax_amounts: lineRates.map((rate, position) => ({ tax_rate_id: rate.id, amount: Number(ownTax(rate)) + offsetOf(position) })) };
        }),
      }));
  });

function run({ lines, rates, options }: RandomInvoice): { result: TaxedInvoice; errors: Map<string, string[]> } {
  const errors = new Map<string, string[]>();
  return { result: computeTaxes(lines, new Map(rates.map((rate) => [rate.id, rate])), options, errors), errors };
}

const isInclusive = (invoice: RandomInvoice) => invoice.rates.some((rate) => rate.inclusive);
const linesWithARate = (invoice: RandomInvoice) => invoice.lines.filter((line) => line.tax_rate_ids.length > 0).length;

describe('computeTaxes: properties of random valid invoices', () => {
  test('when any invoice is computed, then total = total_excluding_tax + total_tax + rounding_amount, and the sums add up', () => {
    fc.assert(
      fc.property(aValidInvoice, (invoice) => {
        const { result } = run(invoice);
        expect(result.total).toBe(result.total_excluding_tax + result.total_tax + result.rounding_amount);
        expect(result.subtotal).toBe(invoice.lines.reduce((sum, line) => sum + line.amount, 0));
        expect(result.total_excluding_tax).toBe(result.lines.reduce((sum, line) => sum + line.amount_excluding_tax, 0));
        expect(result.total_tax).toBe(result.tax_breakdown.reduce((sum, rate) => sum + rate.tax_amount, 0));
      }),
      { numRuns: 500 },
    );
  });

  test('when any invoice is computed, then every figure is a safe integer', () => {
    fc.assert(
      fc.property(aValidInvoice, (invoice) => {
        const { result } = run(invoice);
        const figures = [
          result.subtotal,
          result.total_excluding_tax,
          result.total_tax,
          result.rounding_amount,
          result.total,
          ...result.lines.flatMap((line) => [line.amount, line.amount_excluding_tax]),
          ...result.tax_breakdown.flatMap((rate) => [rate.taxable_amount, rate.tax_amount, rate.percentage_units]),
        ];
        expect(figures.filter((figure) => !Number.isSafeInteger(figure))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  test('when any invoice is computed, then the computed rounding is at most one unit per inclusive line', () => {
    fc.assert(
      fc.property(aValidInvoice, (invoice) => {
        const { result } = run(invoice);
        const inclusiveLines = isInclusive(invoice) ? linesWithARate(invoice) : 0;
        expect(Math.abs(result.rounding_amount - invoice.options.caller_rounding)).toBeLessThanOrEqual(inclusiveLines);
      }),
      { numRuns: 500 },
    );
  });

  test('when an inclusive invoice is computed, then its total is what the client was quoted: subtotal + caller rounding', () => {
    fc.assert(
      fc.property(
        aValidInvoice.filter((invoice) => isInclusive(invoice)),
        (invoice) => {
          const { result } = run(invoice);
          expect(result.total).toBe(result.subtotal + invoice.options.caller_rounding);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('when any invoice is computed, then each rate is taxed as a BigInt reckoning says: once per rate, or the sum of the shop line taxes', () => {
    fc.assert(
      fc.property(aValidInvoice, (invoice) => {
        const { result } = run(invoice);
        expect(result.tax_breakdown.map(({ tax_rate_id, taxable_amount, tax_amount }) => ({ tax_rate_id, taxable_amount, tax_amount }))).toEqual(
          referenceBreakdown(invoice),
        );
        expect(result.lines.map((line) => line.amount_excluding_tax)).toEqual(
          invoice.lines.map((line) => Number(referenceLine(line, invoice.rates, invoice.options.tax_exempt).excludingTax)),
        );
      }),
      { numRuns: 500 },
    );
  });

  test('when the buyer is exempt or under reverse charge, then there is no tax and every rate shows as E or AE at 0 %', () => {
    fc.assert(
      fc.property(
        aValidInvoice.filter((invoice) => invoice.options.tax_exempt !== 'none'),
        (invoice) => {
          const { result } = run(invoice);
          const [category, reason] = invoice.options.tax_exempt === 'exempt' ? ['E', 'Exempt'] : ['AE', 'Reverse charge'];
          expect(result.total_tax).toBe(0);
          expect(result.rounding_amount).toBe(invoice.options.caller_rounding);
          for (const rate of result.tax_breakdown) expect(rate).toMatchObject({ category, percentage_units: 0, tax_amount: 0, exemption_reason: reason });
        },
      ),
      { numRuns: 300 },
    );
  });

  test('when an invoice is valid, then the only error is a total out of range', () => {
    fc.assert(
      fc.property(aValidInvoice, (invoice) => {
        const { result, errors } = run(invoice);
        const outOfRange = result.total < 0 || result.total > MAX_MINOR_AMOUNT;
        expect([...errors.keys()]).toEqual(outOfRange ? ['items'] : []);
      }),
      { numRuns: 500 },
    );
  });
});

// --- Errors ------------------------------------------------------------------------------------

describe('computeTaxes: errors', () => {
  const vat19 = aRate(1, 19);
  const vat7 = aRate(2, 7);
  const vat19Inclusive = aRate(3, 19, { inclusive: true });
  const vat7Inclusive = aRate(4, 7, { inclusive: true });

  test('when a line names six rates, then items.N.tax_rate_ids says at most 5', () => {
    // Arrange
    const rates = [1, 2, 3, 4, 5, 6].map((id) => aRate(id, id));
    // Act
    const { errors } = compute([{ amount: 1000, tax_rate_ids: [] }, { amount: 1000, tax_rate_ids: [1, 2, 3, 4, 5, 6] }], rates);
    // Assert
    expect(errors).toEqual({ 'items.1.tax_rate_ids': ['a line has at most 5 tax rates'] });
  });

  test('when a line names the same rate twice, then items.N.tax_rate_ids says so and the line is taxed once', () => {
    // Act
    const { result, errors } = compute([{ amount: 1000, tax_rate_ids: [1, 1] }], [vat19]);
    // Assert
    expect(errors).toEqual({ 'items.0.tax_rate_ids': ['names the same tax rate twice'] });
    expect(result.tax_breakdown).toMatchObject([{ tax_rate_id: 1, taxable_amount: 1000, tax_amount: 190 }]);
  });

  test('when a line has two inclusive rates, then items.N.tax_rate_ids says at most one', () => {
    // Act
    const { errors } = compute([{ amount: 1000, tax_rate_ids: [3, 4] }], [vat19Inclusive, vat7Inclusive]);
    // Assert
    expect(errors).toEqual({ 'items.0.tax_rate_ids': ['a line has at most one inclusive tax rate'] });
  });

  test('when an invoice mixes inclusive and exclusive rates, then items says they must be all one or the other', () => {
    // Act
    const { errors } = compute(
      [
        { amount: 1000, tax_rate_ids: [1] },
        { amount: 1000, tax_rate_ids: [3] },
      ],
      [vat19, vat19Inclusive],
    );
    // Assert
    expect(errors).toEqual({ items: ['all tax rates on one invoice must be inclusive or all exclusive'] });
  });

  test('when a line gives a tax for a rate it does not carry, then items.N.tax_amounts names the rate', () => {
    // Act
    const { errors } = compute([{ amount: 1000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 190 }, { tax_rate_id: 2, amount: 70 }] }], [vat19, vat7]);
    // Assert
    expect(errors).toEqual({ 'items.0.tax_amounts': ['gives a tax for tax rate 2, which the line does not carry'] });
  });

  test('when a line gives the tax of one rate twice, then items.N.tax_amounts says so', () => {
    // Act
    const { errors } = compute([{ amount: 1000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 190 }, { tax_rate_id: 1, amount: 190 }] }], [vat19]);
    // Assert
    expect(errors).toEqual({ 'items.0.tax_amounts': ['gives the tax of tax rate 1 twice'] });
  });

  test('when some lines of a rate give its tax and others do not, then the lines missing it are named and the tax is computed once', () => {
    // Arrange: line 1 gives only the 7 % tax; lines 0 and 2 give the 19 % tax, line 1 does not.
    const lines: TaxLineInput[] = [
      { amount: 1000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 190 }] },
      { amount: 2000, tax_rate_ids: [1, 2], tax_amounts: [{ tax_rate_id: 2, amount: 140 }] },
      { amount: 3000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 570 }] },
    ];
    // Act
    const { result, errors } = compute(lines, [vat19, vat7]);
    // Assert
    expect(errors).toEqual({ 'items.1.tax_amounts': ['must give the tax for tax rate 1, as the other lines with that rate do'] });
    // 19 % of 60.00 = 11.40, computed once; the 7 % rate's only line gave 1.40.
    expect(result.tax_breakdown).toMatchObject([
      { tax_rate_id: 1, taxable_amount: 6000, tax_amount: 1140 },
      { tax_rate_id: 2, taxable_amount: 2000, tax_amount: 140 },
    ]);
  });

  test("when a shop's exclusive line tax is two units off the line's own, then items.N.tax_amounts.M.amount refuses it", () => {
    // Arrange: 19 % of 25.00 = 4.75; the shop says 4.77.
    const lines: TaxLineInput[] = [
      { amount: 750, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 143 }] },
      { amount: 2500, tax_rate_ids: [2, 1], tax_amounts: [{ tax_rate_id: 2, amount: 175 }, { tax_rate_id: 1, amount: 477 }] },
    ];
    // Act
    const { errors } = compute(lines, [vat19, vat7]);
    // Assert
    expect(errors).toEqual({ 'items.1.tax_amounts.1.amount': ["must be within one minor unit of the line's own tax for that rate"] });
  });

  test("when a shop's inclusive line tax is two units off the line's own, then items.N.tax_amounts.M.amount refuses it", () => {
    // Arrange: 9.99 includes 9.99 − 8.39 = 1.60 of 19 %; the shop says 1.58.
    // Act
    const { errors } = compute([{ amount: 999, tax_rate_ids: [3], tax_amounts: [{ tax_rate_id: 3, amount: 158 }] }], [vat19Inclusive]);
    // Assert
    expect(errors).toEqual({ 'items.0.tax_amounts.0.amount': ["must be within one minor unit of the line's own tax for that rate"] });
  });

  test.each([
    ['exempt', 'exempt', 'must be 0: the buyer is charged no tax (exempt)'],
    ['under reverse charge', 'reverse', 'must be 0: the buyer is charged no tax (reverse charge)'],
  ] as const)('when the buyer is %s and a shop gives a non-zero tax, then it is refused and the tax stays 0', (_status, taxExempt, message) => {
    // Act
    const { result, errors } = compute(
      [
        { amount: 1000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 0 }] },
        { amount: 1000, tax_rate_ids: [1], tax_amounts: [{ tax_rate_id: 1, amount: 1 }] },
      ],
      [vat19],
      { tax_exempt: taxExempt },
    );
    // Assert
    expect(errors).toEqual({ 'items.1.tax_amounts.0.amount': [message] });
    expect(result.total_tax).toBe(0);
  });

  test('when the caller rounding is more than one unit per line, then rounding_amount refuses it; one per line is accepted', () => {
    // Arrange
    const lines = [
      { amount: 1000, tax_rate_ids: [1] },
      { amount: 1000, tax_rate_ids: [1] },
    ];
    // Act
    const tooMuch = compute(lines, [vat19], { caller_rounding: -3 });
    const enough = compute(lines, [vat19], { caller_rounding: 2 });
    // Assert
    expect(tooMuch.errors).toEqual({ rounding_amount: ['must be at most one minor unit per line (2 here), either sign'] });
    expect(enough.errors).toEqual({});
    expect(enough.result.total).toBe(2382); // 20.00 + 3.80 + 0.02
  });

  test('when discounts make the total negative, then items says so and the result is still returned', () => {
    // Act
    const { result, errors } = compute(
      [
        { amount: 1000, tax_rate_ids: [1] },
        { amount: -1500, tax_rate_ids: [1] },
      ],
      [vat19],
    );
    // Assert
    expect(errors).toEqual({ items: ['the invoice total must not be negative: discount lines may not exceed the other lines'] });
    expect(result.total).toBe(-595); // −5.00 − 0.95
  });

  test('when the tax takes the total above the largest amount, then items says it is too large', () => {
    // Act
    const { errors } = compute([{ amount: MAX_MINOR_AMOUNT, tax_rate_ids: [1] }], [vat19]);
    // Assert
    expect(errors).toEqual({ items: ['the invoice total is too large'] });
  });

  test('when several problems occur, then each field lists its own', () => {
    // Act
    const { errors } = compute(
      [
        { amount: 1000, tax_rate_ids: [1, 1] },
        { amount: 1000, tax_rate_ids: [3, 4] },
      ],
      [vat19, vat19Inclusive, vat7Inclusive],
      { caller_rounding: 5 },
    );
    // Assert
    expect(errors).toEqual({
      'items.0.tax_rate_ids': ['names the same tax rate twice'],
      'items.1.tax_rate_ids': ['a line has at most one inclusive tax rate'],
      items: ['all tax rates on one invoice must be inclusive or all exclusive'],
      rounding_amount: ['must be at most one minor unit per line (2 here), either sign'],
    });
  });

  test('when a line names a rate the caller did not look up, then it throws: that is a bug, not a 422', () => {
    // Act and assert
    expect(() => compute([{ amount: 1000, tax_rate_ids: [9] }], [vat19])).toThrow('tax rate 9 was not looked up');
  });
});
