/**
 * The one way hosted pages write HTML: the `html` tag escapes every interpolated value unless it is
 * already HTML made by the tag, and isolates text that could reorder the page around it. Nothing
 * reaches a page unescaped or un-isolated by accident.
 */
const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Safe in element content and in quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]);
}

/** HTML made by the `html` tag: interpolated as it is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolated = SafeHtml | string | number | null | undefined | false | readonly Interpolated[];

/**
 * Text the bidi algorithm could let reorder what surrounds it: explicit embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069), right-to-left marks, and right-to-left letters (Hebrew,
 * Arabic and the other RTL scripts), whose neutral neighbours (digits, dashes) they pull along.
 */
const BIDI_SENSITIVE = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u200F\u061C\u202A-\u202E\u2066-\u2069]|[\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
const EMBEDDING_OPENERS = new Set(['\u202A', '\u202B', '\u202D', '\u202E']);
const ISOLATE_OPENERS = new Set(['\u2066', '\u2067', '\u2068']);
const PARAGRAPH_SEPARATORS = new Set(['\n', '\r', '\u001C', '\u001D', '\u001E', '\u0085', '\u2029']);

/**
 * `text` without the closers it has no opener for (U+202C PDF, U+2069 PDI), matched as the Unicode
 * bidi algorithm matches them: a PDI could otherwise close the isolation around the text early.
 * Openers left open need no closer: the isolation ends them.
 */
function withoutStrayClosers(text: string): string {
  const open: ('embedding' | 'isolate')[] = [];
  let out = '';
  for (const c of text) {
    if (PARAGRAPH_SEPARATORS.has(c)) open.length = 0;
    else if (EMBEDDING_OPENERS.has(c)) open.push('embedding');
    else if (ISOLATE_OPENERS.has(c)) open.push('isolate');
    else if (c === '\u202C') {
      if (open.at(-1) !== 'embedding') continue;
      open.pop();
    } else if (c === '\u2069') {
      const at = open.lastIndexOf('isolate');
      if (at < 0) continue;
      open.length = at;
    }
    out += c;
  }
  return out;
}

/**
 * Where in `before` (the HTML written so far) the next value goes: inside a tag (an attribute), in
 * <title> (text only: no element can isolate there), or in element content.
 */
function contextAfter(before: string): 'attribute' | 'title' | 'content' {
  if (before.lastIndexOf('<') > before.lastIndexOf('>')) return 'attribute';
  const title = before.lastIndexOf('<title>');
  return title >= 0 && before.indexOf('</title>', title) < 0 ? 'title' : 'content';
}

/**
 * Escaped text; bidi-sensitive text in element content goes in <bdi> (an isolate whose direction
 * comes from its own first strong letter), so a client's name holding U+202E cannot reverse the
 * amount or the sentence after it. Attribute values are left as given: a form posts them back. The
 * context is worked out only for such text, which is rare, so pages pay nothing for it otherwise.
 */
function renderText(text: string, before: string): string {
  if (!BIDI_SENSITIVE.test(text)) return escapeHtml(text);
  switch (contextAfter(before)) {
    case 'attribute':
      return escapeHtml(text);
    case 'title':
      return escapeHtml(text.replace(BIDI_CONTROLS, ''));
    default:
      return `<bdi>${escapeHtml(withoutStrayClosers(text))}</bdi>`;
  }
}

function render(value: Interpolated, before: string): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly Interpolated[]).map((item) => render(item, before)).join('');
  if (value === null || value === undefined || value === false) return '';
  return renderText(String(value), before);
}

/**
 * html`<p>${name}</p>`: strings and numbers are escaped (and isolated when they hold bidi controls
 * or right-to-left text), nested html`` is kept, lists are joined, null/false/undefined vanish.
 */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value, out) + strings[i + 1];
  });
  return new SafeHtml(out);
}
