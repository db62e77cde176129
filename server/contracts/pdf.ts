/**
 * A signed contract as a PDF on A4, the signer's copy: both parties, the contract text as it was
 * signed, and the signature record (each signer's name, time, IP address and the SHA-256 of the
 * text they were shown), so the copy can be checked against the text it holds.
 */
import { ISSUER_NAME, LABEL, lineHeight, MUTED_COLOR, PdfLayout, TextStyle } from '../pdf/layout';
import type { PdfFile } from '../pdf/pool';
import type { ContractView } from './schema';
import type { ContractParties, SignatureRecord } from './service';

/** Everything the signed copy shows, read by the signing page. */
export interface SignedContractDocument {
  contract: ContractView;
  /** The amount as the page shows it (`€1,000.00`), or null when the contract names none. */
  amount: string | null;
  businessName: string;
  parties: ContractParties;
  /** Oldest first. */
  signatures: SignatureRecord[];
  /** The SHA-256 (hex) of the text below, as UTF-8. */
  documentSha256: string;
}

const BODY: TextStyle = { size: 10 };
const BOLD: TextStyle = { size: 10, weight: 'bold' };
const MUTED: TextStyle = { size: 10, color: MUTED_COLOR };
const NOTE: TextStyle = { size: 9, color: MUTED_COLOR };
const TITLE: TextStyle = { size: 13, weight: 'bold' };
const NAME_LINES = 3;
/** The width of the labels of the parties' and the signatures' rows. */
const LABEL_WIDTH = 110;

const PARTY_NAMES = { client: 'Client', business: 'Business' } as const;

export async function signedContractPdf(document: SignedContractDocument): Promise<PdfFile> {
  const { contract, parties } = document;
  const kind = contract.type === 'proposal' ? 'Proposal' : 'Contract';
  const businessName = document.businessName.replace(/\s+/g, ' ').trim();
  const layout = new PdfLayout({
    title: `${kind} ${contract.title}, signed`,
    author: businessName,
    // Fixed by the latest signature, so the same record renders the same file.
    createdAt: new Date(document.signatures.at(-1)?.signed_at ?? contract.updated_at),
  });

  heading(layout, businessName, kind.toUpperCase(), contract.livemode);
  layout.paragraph(contract.title, TITLE);
  layout.y += 6;
  row(layout, 'Business', parties.business, BOLD);
  row(layout, 'Client', [parties.client.name, parties.client.company].filter(Boolean).join(', '), BOLD);
  if (document.amount) row(layout, 'Amount', document.amount, BODY);
  row(layout, 'Status', contract.status === 'signed' ? 'Signed by both parties' : 'Signed by the client; awaiting the business\'s signature', BODY);

  section(layout, `${kind} text`);
  layout.paragraph(contract.body, BODY);

  section(layout, 'Signature record');
  hashRow(layout, 'Document SHA-256', document.documentSha256);
  layout.paragraph('The SHA-256 of the text above as UTF-8: each signer was shown the text whose hash their signature carries.', NOTE);
  for (const signature of document.signatures) {
    layout.y += 8;
    layout.ensureRoom(lineHeight(BOLD) * 4);
    row(layout, PARTY_NAMES[signature.party], signature.name, BOLD);
    row(layout, 'Signed at', `${signature.signed_at.slice(0, 10)} ${signature.signed_at.slice(11, 19)} UTC`, BODY);
    row(layout, 'IP address', signature.ip_address ?? 'Not recorded', BODY);
    hashRow(layout, 'Text SHA-256', signature.document_sha256);
  }

  const content = await layout.finish(`${businessName} · ${kind} ${contract.title.replace(/\s+/g, ' ')}`);
  return { filename: `signed-${kind.toLowerCase()}-${contract.id}.pdf`, content };
}

/** The business's name (a few lines at most) and the document's kind on the right. */
function heading(layout: PdfLayout, businessName: string, kind: string, livemode: boolean): void {
  const title: TextStyle = { size: 20, weight: 'bold' };
  const titleLine = layout.line(kind, title);
  const name = layout.clamp(businessName, ISSUER_NAME, layout.width - titleLine.width - 24, NAME_LINES);
  layout.drawLine(titleLine, layout.left, layout.y, title, { align: 'right', width: layout.width });
  layout.y += Math.max(layout.drawLines(name, layout.left, layout.y, ISSUER_NAME), lineHeight(title)) + 6;
  if (!livemode) layout.paragraph('TEST MODE: this is a test contract.', { size: 9, weight: 'bold', color: '#8250df' });
  layout.y += 10;
}

/** A label and its value beside it, the value wrapped to the width left. */
function row(layout: PdfLayout, label: string, value: string, style: TextStyle): void {
  const lines = layout.wrap(value, style, layout.width - LABEL_WIDTH);
  layout.ensureRoom(Math.min(lines.length, 2) * lineHeight(style));
  layout.drawLine(layout.line(label, MUTED), layout.left, layout.y, MUTED);
  // A value of many lines (a long company name) carries on over the page, its label on the first.
  lines.forEach((line) => {
    layout.ensureRoom(lineHeight(style));
    layout.drawLine(line, layout.left + LABEL_WIDTH, layout.y, style);
    layout.y += lineHeight(style);
  });
  layout.y += 2;
}

/** A hash beside its label on one line, set smaller if it must be: a hash broken in two is not read back. */
function hashRow(layout: PdfLayout, label: string, hash: string): void {
  layout.ensureRoom(lineHeight(BODY));
  layout.drawLine(layout.line(label, MUTED), layout.left, layout.y, MUTED);
  const fitted = layout.fit(hash, BODY, layout.width - LABEL_WIDTH);
  layout.drawLine(fitted.line, layout.left + LABEL_WIDTH, layout.y + fitted.drop, fitted.style);
  layout.y += lineHeight(BODY) + 2;
}

function section(layout: PdfLayout, title: string): void {
  layout.y += 14;
  layout.ensureRoom(lineHeight(LABEL) + 6 + lineHeight(BODY) * 2);
  layout.rule();
  layout.y += 6;
  layout.drawLine(layout.line(title.toUpperCase(), LABEL), layout.left, layout.y, LABEL);
  layout.y += lineHeight(LABEL) + 4;
}
