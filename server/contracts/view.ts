/** A contract as the API and its events show it: the amount in major units, its signing links and signatures. Pure. */
import { Static } from '@sinclair/typebox';
import { toMajor } from '../money/amount';
import { Contract, ContractSignature } from './model';
import { ContractView, SignatureShape } from './schema';

const toSignatureView = (row: ContractSignature): Static<typeof SignatureShape> => ({
  party: row.party,
  name: row.name,
  signed_at: row.signed_at,
  document_sha256: row.document_sha256,
});

/** `signatures` may hold other contracts' too (a page's): this contract's are shown, oldest first. */
export function toContractView(baseUrl: string, row: Contract, signatures: readonly ContractSignature[]): ContractView {
  const links = `${baseUrl}/contracts/${row.signing_token}`;
  return {
    id: row.id,
    type: row.type,
    title: row.title,
    client_id: row.client_id,
    body: row.body,
    amount: row.amount === null || row.amount === undefined || !row.currency ? null : toMajor(Number(row.amount), row.currency),
    currency: row.currency ?? null,
    status: row.status,
    client_signed_at: row.client_signed_at ?? null,
    business_signed_at: row.business_signed_at ?? null,
    signing_url: `${links}/sign`,
    embed_url: `${links}/embed`,
    signatures: signatures
      .filter((signature) => signature.contract_id === row.id)
      .sort((a, b) => a.signed_at.localeCompare(b.signed_at))
      .map(toSignatureView),
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
