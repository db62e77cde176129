/**
 * Tax rates of a business: made once, never repriced (only their name, description, `active` and
 * metadata change), and looked up in one query when an invoice is priced (`termsFor`).
 */
import { Knex } from 'knex';
import { Actor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { NotFound, ValidationFailed } from '../errors';
import { firstPagesByMode, Page, paginate } from '../http/pagination';
import { indexMetadata, initialMetadata, mergedMetadata, whereMetadata } from '../metadata/store';
import { TaxRateTerms, toPercentageUnits } from '../money/tax';
import { blankToNull } from '../validation';
import { TaxRate } from './model';
import { defaultCategory, TaxRateChanges, TaxRateInput, TaxRateListParams, TaxRateView } from './schema';
import { toTaxRateTerms, toTaxRateView } from './view';


/** The field error of an id that names no tax rate of the caller's business and mode. */
export const UNKNOWN_TAX_RATE = 'does not name a tax rate of this business';
/** The field error of an archived rate put on a new line. */
export const ARCHIVED_TAX_RATE = 'names an archived tax rate (active: false), which new invoice lines cannot take';

export interface TermsOptions {
  /**
   * The ids go on new invoice lines: an archived rate (`active: false`) is then refused. Lines that
   * keep a rate they already had (a credit note's copies, a schedule made before the rate was
   * archived) pass false.
   */
  forNewLines: boolean;
  /**
   * The request fields an id came from, which the 422 names (`items.0.tax_rate_ids`,
   * `default_tax_rate_ids`); an id with no field is reported under `tax_rate_ids`.
   */
  fieldsOf?: (id: number) => readonly string[];
}

/** `tax_rate_ids: ['does not name … : 12, 14']`: each field's bad ids in one message per problem. */
function rateIdErrors(problems: { message: string; ids: number[] }[], fieldsOf: (id: number) => readonly string[]): Record<string, string[]> {
  const byField = new Map<string, Map<string, number[]>>();
  for (const { message, ids } of problems) {
    for (const id of ids) {
      const fields = fieldsOf(id);
      for (const field of fields.length ? fields : ['tax_rate_ids']) {
        const messages = byField.get(field) ?? new Map<string, number[]>();
        messages.set(message, [...(messages.get(message) ?? []), id]);
        byField.set(field, messages);
      }
    }
  }
  return Object.fromEntries([...byField].map(([field, messages]) => [field, [...messages].map(([message, ids]) => `${message}: ${ids.join(', ')}`)]));
}

export class TaxRateService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
  ) {}

  list(actor: Actor, params: TaxRateListParams): Promise<Page<TaxRateView>> {
    const query = TaxRate.of(actor, this.db.current);
    if (params.active !== undefined) query.where('tax_rates.active', params.active);
    whereMetadata(query, actor, this.db.current, 'tax_rate', params.metadata);
    return paginate(query, TaxRate.tableName, params, toTaxRateView);
  }

  async get(actor: Actor, id: number): Promise<TaxRateView> {
    return toTaxRateView(await this.find(actor, id, this.db.current));
  }

  /** The input was validated by the body schema: its category is given or defaulted, and agrees with the percentage. */
  create(actor: Actor, input: TaxRateInput): Promise<TaxRateView> {
    return this.db.transaction(async (trx) => {
      const metadata = initialMetadata(input.metadata);
      const row = await TaxRate.create(actor, trx, {
        display_name: input.display_name,
        percentage_units: toPercentageUnits(input.percentage),
        inclusive: input.inclusive ?? false,
        category: input.category ?? defaultCategory(input.percentage),
        country: input.country ?? null,
        description: blankToNull(input.description),
        exemption_reason: blankToNull(input.exemption_reason),
        active: true,
        metadata,
      });
      await indexMetadata(trx, actor, { type: 'tax_rate', id: row.id }, metadata, { replace: false });
      return toTaxRateView(row);
    });
  }

  /** Only the name, the description, `active` and the metadata change: what a rate charges never does. */
  update(actor: Actor, id: number, changes: TaxRateChanges): Promise<TaxRateView> {
    return this.db.transaction(async (trx) => {
      const row = await this.find(actor, id, trx, 'update');
      const patch: Partial<TaxRate> = {};
      if (changes.display_name !== undefined) patch.display_name = changes.display_name;
      if (changes.description !== undefined) patch.description = blankToNull(changes.description);
      if (changes.active !== undefined) patch.active = changes.active;
      if (changes.metadata) patch.metadata = mergedMetadata(row.metadata, changes.metadata);
      if (Object.keys(patch).length === 0) return toTaxRateView(row);
      await row.$query(trx).patch(patch);
      if (patch.metadata) await indexMetadata(trx, actor, { type: 'tax_rate', id }, patch.metadata, { replace: true });
      return toTaxRateView(await this.find(actor, id, trx));
    });
  }

  /**
   * The terms of every rate in `ids` (each once, in the order given), read in one query of the
   * actor's business and mode, for pricing invoice lines. An id that names no rate of the actor's
   * (another business's or mode's included) is a 422, as is, `forNewLines`, an archived one: the
   * error names each id under the fields `fieldsOf` says it came from.
   */
  async termsFor(actor: Actor, conn: Knex, ids: readonly number[], { forNewLines, fieldsOf = () => [] }: TermsOptions): Promise<Map<number, TaxRateTerms>> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return new Map();
    const rows = await TaxRate.findAllOwn(actor, conn, wanted);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const unknown = wanted.filter((id) => !byId.has(id));
    const archived = forNewLines ? wanted.filter((id) => byId.get(id)?.active === false) : [];
    if (unknown.length || archived.length) {
      const problems = [
        { message: UNKNOWN_TAX_RATE, ids: unknown },
        { message: ARCHIVED_TAX_RATE, ids: archived },
      ];
      throw new ValidationFailed(rateIdErrors(problems, fieldsOf));
    }
    return new Map(wanted.map((id) => [id, toTaxRateTerms(byId.get(id)!)]));
  }

  /** `invoicing tax-rates list`: a business's rates of one mode or both (at most 100 per mode). */
  async listForOwner(businessId: number, filters: { mode?: 'live' | 'test'; active?: boolean }): Promise<{ data: TaxRateView[]; more: boolean }> {
    await this.businesses.get(businessId);
    return firstPagesByMode(businessId, filters.mode, (actor, page) => this.list(actor, { ...page, ...(filters.active === undefined ? {} : { active: filters.active }) }));
  }

  /** `invoicing tax-rates create`: a rate of this business and mode. */
  async createForOwner(businessId: number, mode: 'live' | 'test', input: TaxRateInput): Promise<TaxRateView> {
    return this.create(await this.ownerActor(businessId, mode), input);
  }

  /** `invoicing tax-rates archive`: the rate of this business and mode, archived (again, if it was). */
  async archiveForOwner(businessId: number, mode: 'live' | 'test', id: number): Promise<TaxRateView> {
    return this.update(await this.ownerActor(businessId, mode), id, { active: false });
  }

  /** The CLI acts for a business that exists (else 'Business not found', not a foreign-key error). */
  private async ownerActor(businessId: number, mode: 'live' | 'test'): Promise<Actor> {
    await this.businesses.get(businessId);
    return systemActor('cli', { businessId, livemode: mode === 'live' });
  }

  private async find(actor: Actor, id: number, conn: Knex, lock?: 'update'): Promise<TaxRate> {
    const row = await TaxRate.findOwn(actor, conn, id, { lock });
    if (!row) throw new NotFound('Tax rate', id);
    return row;
  }
}
