/**
 * What the signing page does: open the page, and act on its forms (Sign or Decline). Each action
 * calls the contract service and returns what happened; view.ts turns that into the answer.
 */
import { ContractService, SigningPage } from '../contracts/service';
import { AppError } from '../errors';
import { PageContext, PageForms } from '../pages/route';
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
 * already so: the page shows where it stands), or the form `again` with its problem.
 */
export type SigningOutcome = { kind: 'refused' | 'not_found' | 'done' } | { kind: 'again'; page: SigningPageState };

export class SigningPages {
  constructor(private readonly contracts: ContractService) {}

  async open(token: string, forms: PageForms, typed: Omit<SigningForm, 'formToken'> = {}): Promise<SigningPageState> {
    const opened = await this.contracts.openSigningPage(token);
    if (!opened) return { opened };
    const { contract } = opened;
    const canAct = !contract.client_signed_at && contract.status !== 'declined' && contract.status !== 'signed';
    return { opened, form: canAct ? { ...typed, formToken: forms.issue(SIGN, token) } : undefined };
  }

  /** Sign or Decline, as the posted form says. */
  async act(token: string, fields: SigningFormFields, context: PageContext): Promise<SigningOutcome> {
    if (!context.forms.accepts(SIGN, token)) return { kind: 'refused' };
    const again = async (typed: Omit<SigningForm, 'formToken'>): Promise<SigningOutcome> => ({ kind: 'again', page: await this.open(token, context.forms, typed) });
    try {
      if (fields.action === 'decline') {
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
}
