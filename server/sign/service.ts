/**
 * What the signing page does: open the page, act on its forms (Sign, and Decline once confirmed),
 * and give the signed copy. Each action calls the contract service and returns what happened;
 * view.ts turns that into the answer.
 */
import { SignedContractDocument } from '../contracts/pdf';
import { ContractService, documentSha256, SigningPage } from '../contracts/service';
import { AppError } from '../errors';
import { formatMoney } from '../invoices/email';
import { InvoiceDocuments } from '../invoices/documents';
import { toMinor } from '../money/amount';
import { PageContext, PageForms } from '../pages/route';
import { PageDownload, pageDownload } from '../pdf/pool';
import { SigningFormFields } from './schema';

const SIGN = 'sign';

export interface SigningForm {
  formToken: string;
  /** What the signer typed, kept when the form comes back with a problem. */
  name?: string;
  problem?: string;
}

/** The page of a token: `opened` null when the token names nothing, `form` absent once the client can no longer act (signed, declined). */
export interface SigningPageState {
  opened: SigningPage | null;
  form?: SigningForm;
}

/**
 * What a post did: `refused` (not from the page), `not_found`, `done` (signed or declined, or
 * already so: the page shows where it stands), `confirm_decline` (Decline asks first), or the form
 * `again` with its problem.
 */
export type SigningOutcome = { kind: 'refused' | 'not_found' | 'done' | 'confirm_decline' } | { kind: 'again'; page: SigningPageState };

/** The signed copy: none for an unknown token, `unsigned` before the client has signed, or the file. */
export type SignedCopyDownload = { kind: 'not_found' | 'unsigned' } | PageDownload;

/** The amount as the page and the signed copy show it (`€1,000.00`), or null. */
export function contractAmount({ amount, currency }: { amount: number | null; currency: string | null }): string | null {
  return amount !== null && currency ? formatMoney(toMinor(amount, currency), currency) : null;
}

/** The client has signed: the page offers the signed copy (with the business's signature too, once it has countersigned). */
export function hasSignedCopy(page: SigningPage): boolean {
  return page.contract.client_signed_at !== null;
}

export class SigningPages {
  constructor(
    private readonly contracts: ContractService,
    private readonly documents: InvoiceDocuments,
  ) {}

  async open(token: string, forms: PageForms, typed: Omit<SigningForm, 'formToken'> = {}): Promise<SigningPageState> {
    const opened = await this.contracts.openSigningPage(token);
    if (!opened) return { opened };
    const { contract } = opened;
    const canAct = !contract.client_signed_at && contract.status !== 'declined' && contract.status !== 'signed';
    return { opened, form: canAct ? { ...typed, formToken: forms.issue(SIGN, token) } : undefined };
  }

  /** Sign, or decline once confirmed, as the posted form says. */
  async act(token: string, fields: SigningFormFields, context: PageContext): Promise<SigningOutcome> {
    if (!context.forms.accepts(SIGN, token)) return { kind: 'refused' };
    if (fields.action === 'decline') return { kind: 'confirm_decline' };
    const again = async (typed: Omit<SigningForm, 'formToken'>): Promise<SigningOutcome> => ({ kind: 'again', page: await this.open(token, context.forms, typed) });
    try {
      if (fields.action === 'confirm_decline') {
        if (!(await this.contracts.declineThroughLink(token))) return { kind: 'not_found' };
      } else {
        if (fields.full_name === null) return await again({ problem: 'Type your full name to sign.' });
        if (fields.agree !== 'yes') return await again({ name: fields.full_name, problem: 'Tick “I agree” to sign.' });
        const { ip, userAgent } = context.requester;
        if (!(await this.contracts.signThroughLink(token, { name: fields.full_name, ipAddress: ip, userAgent }))) return { kind: 'not_found' };
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) return { kind: 'not_found' };
      // Signed or declined meanwhile (another tab, a double click): the page shows where it stands.
    }
    return { kind: 'done' };
  }

  /** `Download signed PDF`: the contract text and its signature record, once the client has signed. */
  async signedCopy(token: string): Promise<SignedCopyDownload> {
    const opened = await this.contracts.openSigningPage(token);
    if (!opened) return { kind: 'not_found' };
    if (!hasSignedCopy(opened)) return { kind: 'unsigned' };
    const { contract, businessName, parties, signatureRecords } = opened;
    const document: SignedContractDocument = {
      contract,
      amount: contractAmount(contract),
      businessName,
      parties,
      signatures: signatureRecords,
      documentSha256: documentSha256(contract.body),
    };
    return pageDownload(this.documents.signedContractPdf(document));
  }
}
