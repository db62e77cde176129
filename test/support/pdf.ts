/**
 * Reads PDFs as a person would: the text through Debian's poppler-utils (`pdftotext`, `pdfinfo`;
 * `.ci/run` installs them), and pages rendered with `pdftoppm` under test/output/pdf/, to be looked at.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const PDF_OUTPUT_DIR = path.join(__dirname, '..', 'output', 'pdf');

async function withFile<T>(bytes: Buffer, work: (file: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pdf-'));
  try {
    const file = path.join(dir, 'document.pdf');
    await fs.writeFile(file, bytes);
    return await work(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The text of every page, or of page `page` (from 1), in reading order (`-layout` keeps a table's row on one line). */
export function pdfText(bytes: Buffer, page?: number): Promise<string> {
  const pages = page === undefined ? [] : ['-f', String(page), '-l', String(page)];
  return withFile(bytes, async (file) => (await run('pdftotext', ['-layout', '-enc', 'UTF-8', ...pages, file, '-'])).stdout);
}

/** pdfinfo's fields: `Pages`, `Title`, `Page size`… */
export function pdfInfo(bytes: Buffer): Promise<Record<string, string>> {
  return withFile(bytes, async (file) => {
    const { stdout } = await run('pdfinfo', ['-enc', 'UTF-8', file]);
    return Object.fromEntries(stdout.split('\n').filter((line) => line.includes(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
  });
}

/** Renders every page as test/output/pdf/<driver>-<name>-<page>.png; returns the files. */
export async function renderPdf(bytes: Buffer, name: string): Promise<string[]> {
  await fs.mkdir(PDF_OUTPUT_DIR, { recursive: true });
  const prefix = path.join(PDF_OUTPUT_DIR, `${process.env.TEST_DB ?? 'sqlite'}-${name}`);
  await withFile(bytes, (file) => run('pdftoppm', ['-r', '60', '-png', file, prefix]));
  const page = new RegExp(`^${path.basename(prefix).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d+\\.png$`);
  return (await fs.readdir(PDF_OUTPUT_DIR)).filter((file) => page.test(file)).sort().map((file) => path.join(PDF_OUTPUT_DIR, file));
}
