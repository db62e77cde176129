/**
 * `GET /contracts/{token}/sign` (never framed) and `/contracts/{token}/embed` (framable by the
 * business's embed origins), and the same paths' form posts: Sign or Decline. Public: the
 * unguessable token is the capability.
 */
import { Request, Response, Router } from 'express';
import { ContractService } from '../contracts/service';
import { signerName } from '../contracts/schema';
import { AppError } from '../errors';
import { FormGuard, parseForm, setHostedPageHeaders } from '../pages/hygiene';
import { refusedFormPage } from '../pages/layout';
import { contractNotFoundPage, SigningForm, signingPage } from './page';

const SIGN = 'sign';
const VIEWS = ['sign', 'embed'] as const;
type View = (typeof VIEWS)[number];

export function signingPageRoutes(contracts: ContractService, forms: FormGuard): Router {
  const r = Router();

  /** Renders the page for `token`, with its headers (framable only as `embed`); false when the token names nothing. */
  async function render(req: Request, res: Response, view: View, form: Omit<SigningForm, 'formToken'> = {}, status = 200): Promise<boolean> {
    const token = String(req.params.token);
    const opened = await contracts.openSigningPage(token);
    setHostedPageHeaders(res, view === 'embed' ? { frameAncestors: opened?.embedOrigins ?? ['*'] } : {});
    if (!opened) return false;
    const { contract, businessName } = opened;
    const canAct = !contract.client_signed_at && contract.status !== 'declined' && contract.status !== 'signed';
    res.status(status).type('html').send(signingPage(contract, businessName, canAct ? { ...form, formToken: forms.token(SIGN, token) } : undefined));
    return true;
  }

  for (const view of VIEWS) {
    r.get(`/contracts/:token/${view}`, async (req, res) => {
      if (!(await render(req, res, view))) res.status(404).type('html').send(contractNotFoundPage());
    });

    r.post(`/contracts/:token/${view}`, parseForm, async (req, res) => {
      const token = String(req.params.token);
      const fields = req.body as Record<string, unknown>;
      if (!forms.accepts(req, SIGN, token)) {
        setHostedPageHeaders(res);
        return void res.status(403).type('html').send(refusedFormPage());
      }
      try {
        if (fields.action === 'decline') {
          if (!(await contracts.declineThroughLink(token))) throw new AppError(404, 'not_found', 'Contract not found');
        } else {
          const name = signerName.validate(fields.full_name);
          if (name.error || typeof name.value !== 'string') return void (await render(req, res, view, { problem: 'Type your full name to sign.' }, 422));
          if (fields.agree !== 'yes') return void (await render(req, res, view, { name: name.value, problem: 'Tick “I agree” to sign.' }, 422));
          const signed = await contracts.signThroughLink(token, { name: name.value, ipAddress: req.ip ?? null, userAgent: req.get('user-agent') ?? null });
          if (!signed) throw new AppError(404, 'not_found', 'Contract not found');
        }
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.status === 404) return void res.status(404).type('html').send(contractNotFoundPage());
        // Signed or declined meanwhile (another tab, a double click): the page shows where it stands.
      }
      res.redirect(303, `/contracts/${encodeURIComponent(token)}/${view}`);
    });
  }
  return r;
}
