/** What commands print: one JSON document with --json, tables and lines for people otherwise. */
import path from 'node:path';
import { stripVTControlCharacters, styleText } from 'node:util';
import { cliIo } from './io';

/** Prints `value` as JSON with --json, or the human-readable lines otherwise. */
export function output(json: boolean | undefined, value: unknown, human: () => string[]): void {
  cliIo().stdout.write(json ? `${JSON.stringify(value)}\n` : `${human().join('\n')}\n`);
}

/**
 * The command as this person runs it, for the next steps a command suggests: `./bin/invoicing`
 * when they ran the clone's own script from the clone (the README's way), else `invoicing`.
 */
export function invoicingCommand(): string {
  const script = process.argv[1];
  return script && path.resolve(script) === path.resolve('bin/invoicing') ? './bin/invoicing' : 'invoicing';
}

type Style = Parameters<typeof styleText>[0];

/** Colour for a terminal only: styleText leaves text plain under NO_COLOR, in a pipe, or on a dumb terminal. */
export function paint(style: Style, text: string): string {
  return styleText(style, text);
}

const visibleLength = (text: string) => [...stripVTControlCharacters(text)].length;

/** Left-aligned columns, each as wide as its widest cell, under a bold header. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => visibleLength(r[i]))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - visibleLength(c))))
      .join('  ')
      .trimEnd();
  return [paint('bold', line(header)), ...rows.map(line)];
}

export function shorten(text: string, max: number): string {
  return [...text].length > max ? `${[...text].slice(0, max - 1).join('')}…` : text;
}

/** `2026-11-22T09:00:00.000Z` → `2026-11-22 09:00:00Z`. */
export function shortTime(iso: string | null): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z') : '-';
}

/** Help text listing examples, added after a command's options. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`;
}
