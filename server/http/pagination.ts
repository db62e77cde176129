/** The list contract: page, per_page (default 20, clamped to 100), an `after` cursor or date, ordered by id. */
import Joi from 'joi';
import { Model, QueryBuilder } from 'objection';
import { Actor, systemActor } from '../auth/actor';
import { selectModelPage } from '../db/statement';
import { toDbTime } from '../db/time';
import { calendarDate } from '../validation';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

export interface ListParams {
  page: number;
  per_page: number;
  /** An integer id (keyset cursor) or a Date (created after it). */
  after?: number | Date;
}

export interface Page<T> {
  data: T[];
  meta: {
    current_page: number;
    per_page: number;
    total: number;
    last_page: number;
    /** The last id of this page, to pass as `after` for the next one; null on the last page. */
    next_after: number | null;
  };
}

/**
 * A business's records as the CLI lists them (`invoicing … list --business ID [--mode M]`): the
 * first page, at most 100, of each mode asked for, live before test, each through the API's own
 * tenant-scoped `list`; `more` when a mode has further pages.
 */
export async function firstPagesByMode<T>(
  businessId: number,
  mode: 'live' | 'test' | undefined,
  list: (actor: Actor, page: ListParams) => Promise<Page<T>>,
): Promise<{ data: T[]; more: boolean }> {
  const modes = mode ? [mode === 'live'] : [true, false];
  const pages = await Promise.all(modes.map((livemode) => list(systemActor('cli', { businessId, livemode }), { page: 1, per_page: MAX_PER_PAGE })));
  return { data: pages.flatMap((page) => page.data), more: pages.some((page) => page.meta.last_page > 1) };
}

const after = Joi.alternatives()
  .try(
    Joi.string().pattern(/^[0-9]{1,16}$/).custom((v: string) => Number(v)),
    calendarDate.custom((v: string) => new Date(`${v}T00:00:00Z`)),
    // Four-digit years only: stored timestamps compare as text.
    Joi.date().iso().min('0001-01-01T00:00:00Z').max('9999-12-31T23:59:59.999Z'),
  )
  .messages({ 'alternatives.match': 'after must be a record id or an ISO 8601 date' })
  .description('A record id: records with a greater id (keyset cursor). An ISO 8601 date or timestamp: records created after it. Anything else is a 400.');

/** The list query schema, plus the endpoint's own filters. */
export function listQuery<T extends ListParams = ListParams>(filters: Joi.PartialSchemaMap = {}): Joi.ObjectSchema<T> {
  return Joi.object<T>({
    // The offset (page - 1) × per_page must stay an exact integer.
    page: Joi.number()
      .integer()
      .min(1)
      .max(Math.floor(Number.MAX_SAFE_INTEGER / MAX_PER_PAGE))
      .default(1)
      .description('Page number, from 1'),
    // Any whole number above 100 is clamped, however large.
    per_page: Joi.number()
      .unsafe()
      .integer()
      .min(1)
      .default(DEFAULT_PER_PAGE)
      .custom((v: number) => Math.min(v, MAX_PER_PAGE))
      .description('Records per page: default 20, values above 100 are clamped to 100; not a whole number ≥ 1 is a 400'),
    after,
    ...filters,
  });
}

/**
 * The page and the total: two indexed queries, run side by side (db/statement's selectModelPage). (A
 * `count(*) over ()` window would make it one, but MariaDB then materialises and sorts every matching
 * row: 30x slower at 10 000.)
 */
export async function paginate<M extends Model & { id: number }, V>(
  builder: QueryBuilder<M>,
  table: string,
  params: ListParams,
  view: (row: M) => V,
): Promise<Page<V>> {
  if (typeof params.after === 'number') builder.where(`${table}.id`, '>', params.after);
  else if (params.after instanceof Date) builder.where(`${table}.created_at`, '>', toDbTime(params.after));

  const { rows, total } = await selectModelPage(builder, table, { limit: params.per_page, offset: (params.page - 1) * params.per_page });

  const more = rows.length === params.per_page && (params.page - 1) * params.per_page + rows.length < total;
  return {
    data: rows.map(view),
    meta: {
      current_page: params.page,
      per_page: params.per_page,
      total,
      last_page: Math.max(1, Math.ceil(total / params.per_page)),
      next_after: more ? rows[rows.length - 1].id : null,
    },
  };
}

/** A query filter naming a record by id (`?client_id=12`): a positive integer, else 400. */
export function idFilter(name: string): Joi.Schema {
  return Joi.string()
    .pattern(/^[1-9][0-9]{0,15}$/)
    .custom((v: string) => Number(v))
    .messages({ 'string.pattern.base': `${name} must be a positive integer` })
    .description(`Only records of this ${name.replace(/_id$/, '')}; not a positive integer is a 400`);
}
