/** The html tag isolates right-to-left text and bidi controls from the page around them. */
import { html } from '../../server/pages/html';

const RLO = '\u202E';
const PDF = '\u202C';
const PDI = '\u2069';

describe('html: text with bidi controls or right-to-left letters', () => {
  test('when element content holds a right-to-left override, then it is wrapped in <bdi> and escaped', () => {
    const out = html`<p>Billed to ${`Mallory${RLO}<b>fdp.exe`} on 2026-11-25</p>`.value;

    expect(out).toBe(`<p>Billed to <bdi>Mallory${RLO}&lt;b&gt;fdp.exe</bdi> on 2026-11-25</p>`);
  });

  test('when element content holds Hebrew or Arabic letters, then it is isolated too', () => {
    expect(html`<td>${'שלום 12'}</td>`.value).toBe('<td><bdi>שלום 12</bdi></td>');
    expect(html`<td>${'مرحبا'}</td>`.value).toBe('<td><bdi>مرحبا</bdi></td>');
  });

  test('when the text closes more embeddings or isolates than it opens, then the stray closers are dropped so it cannot end the isolation early', () => {
    const out = html`<p>${`a${PDI}${PDF}${RLO}b${PDF}c`}</p>`.value;

    expect(out).toBe(`<p><bdi>a${RLO}b${PDF}c</bdi></p>`);
  });

  test('when plain left-to-right text is interpolated, then it is only escaped, as before', () => {
    expect(html`<td>${'Design & build'}</td>`.value).toBe('<td>Design &amp; build</td>');
  });

  test('when the value goes into an attribute, then it is escaped and left as it is (a form sends it back)', () => {
    const out = html`<input type="text" name="full_name" value="${`Eve${RLO}x`}">`.value;

    expect(out).toBe(`<input type="text" name="full_name" value="Eve${RLO}x">`);
  });

  test('when the value goes into the <title>, where no element can isolate it, then its bidi controls are removed', () => {
    const out = html`<head><title>${`Invoice 7 — Mallory${RLO}gnp.exe`}</title></head>`.value;

    expect(out).toBe('<head><title>Invoice 7 — Mallorygnp.exe</title></head>');
  });
});
