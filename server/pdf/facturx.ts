/**
 * Factur-X / ZUGFeRD: a PDF/A-3b document that carries its e-invoice (a CII document) as an
 * associated file. PDFKit makes the PDF/A-3 part (the pdfaid XMP, the sRGB output intent, embedded
 * fonts) and embeds the file with its /AFRelationship and the catalog's /AF array; this module adds
 * what Factur-X asks beyond PDF/A: the fx: XMP properties and the extension schema that declares
 * them, and XMP metadata whose text is escaped.
 */
import type {} from 'pdfkit';
import { xmlCharactersOf } from '../xml-text';

/** An e-invoice to embed in a PDF: its file name (`factur-x.xml`) and its XML. */
export interface PdfAttachment {
  filename: string;
  xml: string;
}

/** PDFKit's options for a PDF/A-3b document (PDF/A-3 is based on PDF 1.7). */
export const PDFA3_OPTIONS = { pdfVersion: '1.7', subset: 'PDF/A-3b' } as const;

const FX_NAMESPACE = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

/** The specification identifier (BT-24) of the CII documents a Factur-X PDF carries: EN 16931's own. */
const EN16931_GUIDELINE = 'urn:cen.eu:en16931:2017';

/**
 * The Factur-X conformance level of a CII document, read from its specification identifier: a full
 * EN 16931 invoice, so the XML is the PDF's equivalent (AFRelationship Alternative).
 */
function conformanceLevelOf(xml: string): string {
  const id = /<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>([^<]*)<\/ram:ID>/.exec(xml)?.[1]?.trim();
  if (id !== EN16931_GUIDELINE) throw new Error(`A Factur-X PDF carries an EN 16931 CII document; this one declares ${id ?? 'no specification identifier'}`);
  return 'EN 16931';
}

/** Text as XMP may carry it: escaped, and without the characters XML 1.0 cannot carry (a control character in a seller's name). */
function escapeXml(text: string): string {
  return xmlCharactersOf(text).replace(/[&<>"]/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char] as string);
}

/** XMP's date: ISO 8601 to the second, in UTC (as the Info dictionary's D:…Z). */
function xmpDate(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** One property of the fx: schema, as PDF/A's extension schema describes it. */
function fxProperty(name: string, description: string): string {
  return `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${name}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${description}</pdfaProperty:description></rdf:li>`;
}

/** The fx: properties and, as PDF/A requires for a schema it does not predefine, their extension schema. */
function facturxXmp(attachment: PdfAttachment, conformanceLevel: string): string {
  return `<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
<pdfaSchema:namespaceURI>${FX_NAMESPACE}</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>fx</pdfaSchema:prefix>
<pdfaSchema:property><rdf:Seq>
${fxProperty('DocumentFileName', 'The name of the embedded XML document')}
${fxProperty('DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER')}
${fxProperty('Version', 'The actual version of the standard applying to the embedded XML document')}
${fxProperty('ConformanceLevel', 'The conformance level of the embedded XML document')}
</rdf:Seq></pdfaSchema:property>
</rdf:li></rdf:Bag></pdfaExtension:schemas>
</rdf:Description>
<rdf:Description rdf:about="" xmlns:fx="${FX_NAMESPACE}">
<fx:DocumentType>INVOICE</fx:DocumentType>
<fx:DocumentFileName>${escapeXml(attachment.filename)}</fx:DocumentFileName>
<fx:Version>1.0</fx:Version>
<fx:ConformanceLevel>${conformanceLevel}</fx:ConformanceLevel>
</rdf:Description>`;
}

/** What PDFKit's metadata writer reads and calls (not in its type declarations). */
interface MetadataInternals {
  info: { Title?: string; Author?: string; Creator?: string; Producer?: string; CreationDate: Date; ModDate?: Date };
  _addInfo?: () => void;
}

/**
 * The document information as XMP, the same values as the Info dictionary (PDF/A keeps the two
 * alike). PDFKit writes its own without escaping, so a seller named "A & B" would make the XMP
 * packet malformed, and without xmp:ModifyDate: this replaces it.
 */
function infoXmp({ info }: MetadataInternals): string {
  const text = (value: string | undefined) => escapeXml(value ?? '');
  const modified = info.ModDate ?? info.CreationDate;
  return `<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
<xmp:CreateDate>${xmpDate(info.CreationDate)}</xmp:CreateDate>
<xmp:ModifyDate>${xmpDate(modified)}</xmp:ModifyDate>
<xmp:MetadataDate>${xmpDate(modified)}</xmp:MetadataDate>
<xmp:CreatorTool>${text(info.Creator)}</xmp:CreatorTool>
</rdf:Description>
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:format>application/pdf</dc:format>
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${text(info.Title)}</rdf:li></rdf:Alt></dc:title>
<dc:creator><rdf:Seq><rdf:li>${text(info.Author)}</rdf:li></rdf:Seq></dc:creator>
</rdf:Description>
<rdf:Description rdf:about="" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
<pdf:Producer>${text(info.Producer)}</pdf:Producer>
</rdf:Description>`;
}

/**
 * Embeds `attachment` in `doc`, a document made with PDFA3_OPTIONS, as its Factur-X invoice: a
 * text/xml associated file (AFRelationship Alternative: the XML is the invoice the PDF shows, the
 * relationship Factur-X asks for every profile from BASIC on), dated `date`, with the XMP metadata.
 */
export function embedFacturX(doc: PDFKit.PDFDocument, attachment: PdfAttachment, date: Date): void {
  const internals = doc as unknown as MetadataInternals;
  // PDFKit's own info XMP is replaced (see infoXmp); should a release rename it, fail rather than write it unescaped.
  if (typeof internals._addInfo !== 'function') throw new Error('PDFKit has no _addInfo: the XMP metadata of PDF/A documents needs a look');
  internals._addInfo = () => doc.appendXML(infoXmp(internals));
  const conformanceLevel = conformanceLevelOf(attachment.xml);
  doc.appendXML(facturxXmp(attachment, conformanceLevel));
  // `relationship` (AFRelationship) is PDFKit's, missing from its type declarations.
  const options: PDFKit.Mixins.PDFAttachmentOptions & { relationship: string } = {
    name: attachment.filename,
    type: 'text/xml',
    description: `Factur-X e-invoice, ${conformanceLevel} (UN/CEFACT CII)`,
    relationship: 'Alternative',
    creationDate: date,
    modifiedDate: date,
  };
  doc.file(Buffer.from(attachment.xml, 'utf8'), options);
}
