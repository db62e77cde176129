/**
 * The faces our PDFs are set in, all TrueType from npm: DejaVu Sans for Latin (Turkish included),
 * Greek, Cyrillic and the currency signs; Noto Sans SC for Chinese and Japanese; IBM Plex Sans KR
 * for Korean. A PDF font draws only its own glyphs (PDFKit has no per-glyph fallback), so text is cut
 * into runs, each set in the first family that has its characters.
 */
import fs from 'node:fs';
import * as fontkit from 'fontkit';
import type {} from 'pdfkit';

export type Weight = 'regular' | 'bold';

/** One TrueType file, registered in a document under its name. */
export interface Face {
  name: string;
  file: string;
}

interface Family {
  key: string;
  faces: Record<Weight, Face>;
}

function family(key: string, regular: string, bold: string): Family {
  return { key, faces: { regular: { name: `${key}-regular`, file: require.resolve(regular) }, bold: { name: `${key}-bold`, file: require.resolve(bold) } } };
}

const FAMILIES: readonly Family[] = [
  family('dejavu', 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf', 'dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
  family('noto-sans-sc', '@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf', '@expo-google-fonts/noto-sans-sc/700Bold/NotoSansSC_700Bold.ttf'),
  family('ibm-plex-sans-kr', '@expo-google-fonts/ibm-plex-sans-kr/IBMPlexSansKR_400Regular.ttf', '@expo-google-fonts/ibm-plex-sans-kr/IBMPlexSansKR_700Bold.ttf'),
];

/** A stretch of text set in one face. */
export interface Run {
  face: Face;
  text: string;
}

/**
 * The parsed fonts, one per face for the process, made when a document first needs them (the CJK
 * faces are 10 MB each). PDFKit takes a fontkit font as it is, so documents share the decoded tables
 * instead of parsing the file again: that was most of a document's time.
 */
const fonts = new Map<string, fontkit.Font>();

function fontOf(face: Face): fontkit.Font {
  let font = fonts.get(face.name);
  if (!font) {
    font = fontkit.create(fs.readFileSync(face.file)) as fontkit.Font;
    fonts.set(face.name, font);
  }
  return font;
}

/** Whether the family draws the character (its regular face's map: the bold face covers the same). */
function has(family: Family, codePoint: number): boolean {
  return fontOf(family.faces.regular).hasGlyphForCodePoint(codePoint);
}

/** Spaces, marks and controls belong to the run they are in, so "İstanbul 東京" is two runs, not three. */
const FOLLOWS_NEIGHBOUR = /[\s\p{M}\p{Cc}]/u;

/**
 * `text` cut into runs, each in the first family that can draw it (so Latin after a CJK name goes
 * back to DejaVu); a character no family has is drawn (as a box) in the first.
 */
export function runsOf(text: string, weight: Weight): Run[] {
  const runs: Run[] = [];
  let current: Family | undefined;
  let pending = '';
  for (const char of text) {
    let next = current;
    if (!next || !FOLLOWS_NEIGHBOUR.test(char)) {
      const codePoint = char.codePointAt(0) as number;
      next = FAMILIES.find((candidate) => has(candidate, codePoint)) ?? FAMILIES[0];
    }
    if (next !== current && current && pending) {
      runs.push({ face: current.faces[weight], text: pending });
      pending = '';
    }
    current = next;
    pending += char;
  }
  if (current && pending) runs.push({ face: current.faces[weight], text: pending });
  return runs;
}

/** Registers on a PDFKit document each face of `runs` it does not have yet. */
export function registerFaces(doc: PDFKit.PDFDocument, registered: Set<string>, runs: readonly Run[]): void {
  for (const { face } of runs) {
    if (registered.has(face.name)) continue;
    // Typed as a file, but PDFKit also takes a fontkit font (anything with `layout`).
    doc.registerFont(face.name, fontOf(face) as unknown as Buffer);
    registered.add(face.name);
  }
}
