/**
 * Peppol participant IDs against Peppol BIS Billing 3.0's PEPPOL-COMMON-R040…R050: known numbers per
 * scheme, the rules' quirks, check digits computed independently, and the official validator's
 * verdict (../shared/einvoice/validate --rules peppol) on a Peppol example invoice whose buyer has
 * each ID as its electronic address, which must be our functions' verdict.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { peppolIdProblem, peppolIdWarning } from '../../server/einvoice/participant-id';

const SHARED = path.resolve(__dirname, '../../../shared/einvoice');
const VALIDATOR = path.join(SHARED, 'validate');
/** An official Peppol example (selftest/cases.tsv: valid under --rules peppol). */
const EXAMPLE = path.join(SHARED, 'selftest/examples/peppol/base-example.xml');
const OUTPUT = path.join(__dirname, '..', 'output', 'einvoice', 'participant-ids', process.env.TEST_DB ?? 'sqlite');

/** The rule ID a message starts with. */
const ruleOf = (message: string | null) => message?.split(':')[0] ?? null;

describe('peppolIdProblem and peppolIdWarning on known identifiers', () => {
  test.each([
    ['0088', '7300010000001', 'a GLN'],
    ['0088', '5790000435975', 'a Danish GLN'],
    ['0192', '923609016', 'a Norwegian organisation number'],
    ['0192', '974760673', 'a Norwegian organisation number'],
    ['0184', '10150817', 'a Danish CVR number'],
    ['0184', 'DK10150817', 'a Danish CVR number with DK'],
    ['0208', '0202239951', 'a Belgian enterprise number'],
    ['0208', '0403170701', 'a Belgian enterprise number'],
    ['0007', '5560125790', 'a Swedish organisation number'],
    ['0007', '2021005448', 'a Swedish organisation number'],
    ['0151', '51824753556', 'an Australian Business Number'],
    ['0151', '53004085616', 'an Australian Business Number'],
    ['0201', 'UFABCD', 'an IPA code'],
    ['0210', 'RSSMRA85T10A562S', 'a Codice Fiscale'],
    ['0210', '00743110157', 'a Codice Fiscale of a company'],
    ['0211', 'IT00743110157', 'a Partita IVA'],
    ['0002', 'FR23342', 'a scheme with no such rule'],
    ['9930', 'DE123456789', 'a scheme with no such rule'],
  ])('when the ID is %s:%s (%s), then it passes', (scheme, id) => {
    expect(peppolIdProblem(scheme, id)).toBeNull();
    expect(peppolIdWarning(scheme, id)).toBeNull();
  });

  test.each([
    ['0088', '7300010000002', 'PEPPOL-COMMON-R040'],
    ['0088', '730001000000A', 'PEPPOL-COMMON-R040'],
    ['0088', '', 'PEPPOL-COMMON-R040'],
    ['0192', '923609017', 'PEPPOL-COMMON-R041'],
    ['0192', '92360901', 'PEPPOL-COMMON-R041'],
    ['0192', 'NO923609016', 'PEPPOL-COMMON-R041'],
    ['0184', '1015081', 'PEPPOL-COMMON-R042'],
    ['0184', 'dk10150817', 'PEPPOL-COMMON-R042'],
    ['0184', 'DK-10150817', 'PEPPOL-COMMON-R042'],
    ['0208', '0202239952', 'PEPPOL-COMMON-R043'],
    ['0208', 'BE0202239951', 'PEPPOL-COMMON-R043'],
    ['0208', '202239951', 'PEPPOL-COMMON-R043'],
    ['0007', '5560125791', 'PEPPOL-COMMON-R049'],
    ['0007', '556012-5790', 'PEPPOL-COMMON-R049'],
    ['0007', 'SE5560125790', 'PEPPOL-COMMON-R049'],
    ['0151', '51824753557', 'PEPPOL-COMMON-R050'],
    ['0151', '5182475355', 'PEPPOL-COMMON-R050'],
  ])('when the ID is %s:%s, then it breaks %s, which is fatal', (scheme, id, rule) => {
    expect(peppolIdProblem(scheme, id)).toMatch(new RegExp(`^${rule}: .*scheme ${scheme}`));
    expect(peppolIdWarning(scheme, id)).toBeNull();
  });

  test.each([
    ['0201', 'UF-ABC', 'PEPPOL-COMMON-R044'],
    ['0201', 'UFABCDE', 'PEPPOL-COMMON-R044'],
    ['0210', 'RSSMRA85T10A562', 'PEPPOL-COMMON-R045'],
    ['0210', 'RSSMRA8XT10A562S', 'PEPPOL-COMMON-R045'],
    ['0210', '0074311015A', 'PEPPOL-COMMON-R045'],
    ['9907', 'RSSMRA85T10A56', 'PEPPOL-COMMON-R046'],
    ['0211', 'IT00743110158', 'PEPPOL-COMMON-R047'],
    ['0211', 'IT0074311015', 'PEPPOL-COMMON-R047'],
    ['0211', 'it0074311015X', 'PEPPOL-COMMON-R047'],
  ])('when the ID is %s:%s, then it draws %s, a warning', (scheme, id, rule) => {
    expect(peppolIdWarning(scheme, id)).toMatch(new RegExp(`^${rule}: .*scheme ${scheme}`));
    expect(peppolIdProblem(scheme, id)).toBeNull();
  });
});

describe('the rules as Peppol wrote them, quirks included', () => {
  test.each([
    ['0088', '07300010000001', 'a GLN of any length is checked for its check digit only'],
    ['0088', '9482348239847239874', 'the 19-digit GLN of the Peppol example'],
    ['0088', ' 7300010000001\n', 'whitespace around the value is normalised away'],
    ['0208', '\t0202239951 ', 'whitespace around the value is normalised away'],
    ['0208', '0000000097', '97 check digits when the first eight are a multiple of 97'],
    ['0210', '+0074311015', 'an 11-character Codice Fiscale only has to be castable as an integer'],
    ['0210', 'RSSMRA+5T 0A562S', 'the digit fields of a 16-character one too'],
    ['0210', 'RSSMRA85T10😀😀😀1S', 'its length counts characters, not UTF-16 units'],
    ['0211', '00743110158', 'a Partita IVA without IT is not checked'],
    ['0211', 'It00743110158', 'nor with It'],
  ])('when the ID is %s:%j, then it passes: %s', (scheme, id) => {
    expect(peppolIdProblem(scheme, id)).toBeNull();
    expect(peppolIdWarning(scheme, id)).toBeNull();
  });

  test.each<[string, string, string | null, string]>([
    ['0192', '000000000', 'PEPPOL-COMMON-R041', 'nine zeros have a right check digit but are not a number above 0'],
    ['0184', ' 10150817', 'PEPPOL-COMMON-R042', 'the Danish rule reads the value without normalising whitespace'],
    ['0007', '５５６０１２５７９０', 'PEPPOL-COMMON-R049', 'digits other than ASCII ones are not a number'],
    ['0088', '0', null, 'a one-digit GLN is its own check digit: 0'],
    ['0088', '1', 'PEPPOL-COMMON-R040', 'and only 0'],
  ])('when the ID is %s:%j, then its problem is %s: %s', (scheme, id, rule) => {
    expect(ruleOf(peppolIdProblem(scheme, id))).toBe(rule);
  });

  test.each(['IT+0743110157', 'IT-0743110157', 'IT 0743110157'])('when a Partita IVA is %j, then R047 cannot run on it, which makes the document invalid: a problem', (id) => {
    expect(peppolIdProblem('0211', id)).toMatch(/^PEPPOL-COMMON-R047: .*stops Peppol's rules from running/);
    expect(peppolIdWarning('0211', id)).toBeNull();
  });

  test('when a scheme differs from a checked one only in spacing, then no rule applies to it, as the rules compare schemeID exactly', () => {
    expect(peppolIdProblem(' 0088', 'x')).toBeNull();
    expect(peppolIdProblem('0088', 'x')).toMatch(/^PEPPOL-COMMON-R040/);
  });
});

/** Check digits as their registries describe them, written apart from the module. */
const weighted = (digits: string, weights: number[]) => [...digits].reduce((sum, d, i) => sum + Number(d) * weights[i], 0);
const REGISTRIES: Record<string, { length: number; valid: (digits: string) => boolean; prefix?: string }> = {
  // GS1: from the right of the check digit, weights 3, 1, 3…
  '0088': { length: 13, valid: (d) => (10 - (weighted(d.slice(0, 12), [1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3]) % 10)) % 10 === Number(d[12]) },
  // Brønnøysund: weights 3 2 7 6 5 4 3 2, check 11 − remainder (0 for 11, none for 10); Peppol's rule also wants a number above 0.
  '0192': { length: 9, valid: (d) => { const r = 11 - (weighted(d.slice(0, 8), [3, 2, 7, 6, 5, 4, 3, 2]) % 11); return /[1-9]/.test(d) && (r === 11 ? 0 : r) === Number(d[8]); } },
  // Belgian enterprise number: 97 − (first eight mod 97).
  '0208': { length: 10, valid: (d) => 97 - (Number(d.slice(0, 8)) % 97) === Number(d.slice(8)) },
  // Swedish organisation number: Luhn over ten digits.
  '0007': { length: 10, valid: (d) => [...d].reverse().reduce((sum, c, i) => sum + (i % 2 ? [0, 2, 4, 6, 8, 1, 3, 5, 7, 9][Number(c)] : Number(c)), 0) % 10 === 0 },
  // ABN: one less from the first digit (weight 10, so 10 less), weights 10 1 3 … 19, a multiple of 89.
  '0151': { length: 11, valid: (d) => (weighted(d, [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19]) - 10) % 89 === 0 },
  // Partita IVA: Luhn over eleven digits, after IT.
  '0211': { length: 11, prefix: 'IT', valid: (d) => [...d].reduce((sum, c, i) => sum + (i % 2 ? [0, 2, 4, 6, 8, 1, 3, 5, 7, 9][Number(c)] : Number(c)), 0) % 10 === 0 },
};
const check = (scheme: string, id: string) => (scheme === '0211' ? peppolIdWarning : peppolIdProblem)(scheme, id);

describe('check digits against the registries\' algorithms', () => {
  test.each(Object.entries(REGISTRIES))('when digits of scheme %s are random, then the rule passes them exactly when their check digit is right', (scheme, { length, valid, prefix = '' }) => {
    fc.assert(fc.property(fc.stringMatching(new RegExp(`^[0-9]{${length}}$`)), (digits) => (check(scheme, prefix + digits) === null) === valid(digits)), { numRuns: 2000 });
  });

  test.each(Object.entries(REGISTRIES))('when one digit of a valid number of scheme %s changes, then the rule refuses it', (scheme, { length, valid, prefix = '' }) => {
    // Random digits made valid by their last two (a filter alone would skip 96 in 97 Belgian numbers).
    const madeValid = (digits: string) => Array.from({ length: 100 }, (_, k) => digits.slice(0, -2) + String(k).padStart(2, '0')).find(valid) ?? null;
    const aValid = fc.stringMatching(new RegExp(`^[0-9]{${length}}$`)).map(madeValid).filter((digits): digits is string => digits !== null);
    fc.assert(fc.property(aValid, fc.nat(length - 1), fc.integer({ min: 1, max: 9 }), (digits, at, delta) => {
      const changed = digits.slice(0, at) + String((Number(digits[at]) + delta) % 10) + digits.slice(at + 1);
      return check(scheme, prefix + digits) === null && check(scheme, prefix + changed) !== null;
    }), { numRuns: 300 });
  });
});

/** What the validator's --tsv says of one file: FILE, valid|invalid, fatal IDs, warning IDs. */
type Verdict = { status: 'valid' | 'invalid'; fatal: string[]; warnings: string[] };

/** The official validator over `files` in one call, by file name. */
async function validateAll(files: string[]): Promise<Map<string, Verdict>> {
  const tsv = path.join(OUTPUT, 'out.tsv');
  try {
    await promisify(execFile)('bash', [VALIDATOR, '--rules', 'peppol', '--tsv', tsv, ...files], { timeout: 300_000 });
  } catch (err) {
    // Exit status 1: some file is invalid, as several are meant to be; anything else is a failure to run.
    if ((err as { code?: number }).code !== 1) throw err;
  }
  const ids = (column: string | undefined) => (column ? column.split(/[,\s]+/).filter(Boolean).sort() : []);
  return new Map(fs.readFileSync(tsv, 'utf8').trim().split('\n').map((row) => {
    const [file, status, fatal, warnings] = row.split('\t');
    return [path.basename(file), { status: status as Verdict['status'], fatal: ids(fatal), warnings: ids(warnings) }];
  }));
}

/** Our verdict on a document whose only change is the buyer's electronic address `scheme`:`id`. */
function ourVerdict(scheme: string, id: string): Verdict {
  const problem = ruleOf(peppolIdProblem(scheme, id));
  const warning = ruleOf(peppolIdWarning(scheme, id));
  return { status: problem ? 'invalid' : 'valid', fatal: problem ? [problem] : [], warnings: warning ? [warning] : [] };
}

/** The example with its buyer's cbc:EndpointID replaced (the seller's, party IDs and company IDs unchanged). */
function withBuyerEndpoint(example: string, scheme: string, id: string): string {
  const escaped = id.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const buyer = /(<cac:AccountingCustomerParty>\s*<cac:Party>\s*)<cbc:EndpointID schemeID="[^"]*">[^<]*<\/cbc:EndpointID>/;
  if (!buyer.test(example)) throw new Error('the example has no buyer electronic address where expected');
  return example.replace(buyer, (_, before: string) => `${before}<cbc:EndpointID schemeID="${scheme}">${escaped}</cbc:EndpointID>`);
}

const haveValidator = fs.existsSync(VALIDATOR) && fs.existsSync(EXAMPLE);
if (!haveValidator) console.log(`${VALIDATOR} or its Peppol example is absent: the official validator's verdicts on participant IDs are skipped.`);

(haveValidator ? describe : describe.skip)('the official validator agrees', () => {
  const CASES: [string, string][] = [
    ['0088', '7300010000001'], ['0088', '7300010000002'], ['0088', '07300010000001'], ['0088', '730001000000A'],
    ['0192', '923609016'], ['0192', '923609017'], ['0192', '000000000'],
    ['0184', 'DK10150817'], ['0184', '10150817'], ['0184', 'dk10150817'], ['0184', '1015081'],
    ['0208', '0202239951'], ['0208', '0202239952'], ['0208', 'BE0202239951'],
    ['0007', '5560125790'], ['0007', '5560125791'], ['0007', '556012-5790'],
    ['0151', '51824753556'], ['0151', '51824753557'],
    ['0201', 'UFABCD'], ['0201', 'UF-ABC'],
    ['0210', 'RSSMRA85T10A562S'], ['0210', 'RSSMRA85T10A562'], ['0210', '+0074311015'],
    ['0211', 'IT00743110157'], ['0211', 'IT00743110158'], ['0211', '00743110158'], ['0211', 'IT+0743110157'],
    ['0002', 'FR23342'],
  ];

  test('when the buyer\'s electronic address is each ID, then the document is valid, invalid or warned of exactly as our functions say', async () => {
    fs.rmSync(OUTPUT, { recursive: true, force: true });
    fs.mkdirSync(OUTPUT, { recursive: true });
    const example = fs.readFileSync(EXAMPLE, 'utf8');
    const files = CASES.map(([scheme, id], i) => {
      const file = path.join(OUTPUT, `${String(i + 1).padStart(2, '0')}-${scheme}.xml`);
      fs.writeFileSync(file, withBuyerEndpoint(example, scheme, id));
      return file;
    });

    const verdicts = await validateAll(files);

    const theirs = CASES.map(([scheme, id], i) => {
      const verdict = verdicts.get(path.basename(files[i]))!;
      // When a rule fails to run the validator names no rule (its fatal ID is ERROR): here only R047 can, on a Partita IVA such as IT+0743110157.
      const fatal = verdict.fatal.map((rule) => (rule === 'ERROR' && scheme === '0211' ? 'PEPPOL-COMMON-R047' : rule));
      return { id: `${scheme}:${id}`, ...verdict, fatal };
    });
    expect(theirs).toEqual(CASES.map(([scheme, id]) => ({ id: `${scheme}:${id}`, ...ourVerdict(scheme, id) })));
    // Every rule was broken at least once.
    expect(new Set(theirs.flatMap((v) => [...v.fatal, ...v.warnings]))).toEqual(new Set(['PEPPOL-COMMON-R040', 'PEPPOL-COMMON-R041', 'PEPPOL-COMMON-R042', 'PEPPOL-COMMON-R043', 'PEPPOL-COMMON-R044', 'PEPPOL-COMMON-R045', 'PEPPOL-COMMON-R047', 'PEPPOL-COMMON-R049', 'PEPPOL-COMMON-R050']));
  });
});
