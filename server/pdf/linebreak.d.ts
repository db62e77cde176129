/** The Unicode line breaking algorithm (UAX #14), as PDFKit uses it: https://github.com/foliojs/linebreak */
declare module 'linebreak' {
  interface Break {
    /** The text may break before this UTF-16 index. */
    position: number;
    /** A hard break: a newline. */
    required: boolean;
  }
  export default class LineBreaker {
    constructor(text: string);
    nextBreak(): Break | null;
  }
}
