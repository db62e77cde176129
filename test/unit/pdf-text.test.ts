/** Text for PDFs: runs by the font family that has the characters, and lines broken to a width. */
import { runsOf } from '../../server/pdf/fonts';
import { PdfLayout } from '../../server/pdf/layout';

const families = (text: string) => runsOf(text, 'regular').map((run) => [run.face.name.replace(/-regular$/, ''), run.text]);

describe('runsOf', () => {
  test('when Latin, Turkish and Greek are mixed, then one DejaVu run carries them all', () => {
    expect(families('İstanbul Θεσσαλονίκη ğüşıöç €5')).toEqual([['dejavu', 'İstanbul Θεσσαλονίκη ğüşıöç €5']]);
  });

  test('when a CJK name sits in Latin text, then it is its own run and the Latin after it goes back to DejaVu', () => {
    expect(families('Ayşe 設計 Studio · 서울 Office')).toEqual([
      ['dejavu', 'Ayşe '],
      ['noto-sans-sc', '設計 '],
      ['dejavu', 'Studio · '],
      ['ibm-plex-sans-kr', '서울 '],
      ['dejavu', 'Office'],
    ]);
  });

  test('when the bold weight is asked for, then the runs use the bold faces', () => {
    expect(runsOf('Total 合計', 'bold').map((run) => run.face.name)).toEqual(['dejavu-bold', 'noto-sans-sc-bold']);
  });
});

describe('PdfLayout.wrap', () => {
  const layout = new PdfLayout({ title: 't', author: 'a', createdAt: new Date(0) });
  const style = { size: 10 };
  const texts = (text: string, width: number) => layout.wrap(text, style, width).map((line) => line.runs.map((run) => run.text).join(''));

  test('when words do not fit, then lines break between words and each fits the width', () => {
    const lines = layout.wrap('the quick brown fox jumps over the lazy dog', style, 80);

    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.width).toBeLessThanOrEqual(80);
    expect(lines.map((line) => line.runs.map((run) => run.text).join('')).join(' ')).toBe('the quick brown fox jumps over the lazy dog');
  });

  test('when CJK text has no spaces, then it breaks between characters', () => {
    const lines = texts('東京都渋谷区の翻訳作業と北京市朝阳区の編集作業', 60);

    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join('')).toBe('東京都渋谷区の翻訳作業と北京市朝阳区の編集作業');
  });

  test('when a newline is in the text, then the line always breaks there, and an empty line is kept', () => {
    expect(texts('Atatürk Cd. 12\n\n34000 İstanbul', 400)).toEqual(['Atatürk Cd. 12', '', '34000 İstanbul']);
  });

  test('when one word is wider than the width, then it is cut where it reaches the edge', () => {
    const word = 'x'.repeat(100);

    const lines = layout.wrap(word, style, 100);

    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(line.width).toBeLessThanOrEqual(100);
    expect(lines.map((line) => line.runs.map((run) => run.text).join('')).join('')).toBe(word);
  });
});
