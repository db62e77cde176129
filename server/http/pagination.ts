/** The list contract: page, per_page (default 20, clamped to 100), an `after` cursor or date, ordered by id. */
import Joi from 'joi';
import { Model, QueryBuilder, raw } from 'objection';
import { toDbTime } from '../db/time';

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
  meta: { current_page: number; per_page: number; total: number; last_page: number };
}

const after = Joi.alternatives()
  .try(Joi.string().pattern(/^[0-9]{1,16}$/).custom((v: string) => Number(v)), Joi.date().iso())
  .messages({ 'alternatives.match': 'after must be a record id or an ISO 8601 date' });

/** The list query schema, plus the endpoint's own filters. */
export function listQuery(filters: Joi.PartialSchemaMap = {}): Joi.ObjectSchema {
  return Joi.object({
    page: Joi.number().integer().min(1).max(1_000_000).default(1),
    per_page: Joi.number()
      .integer()
      .min(1)
      .default(DEFAULT_PER_PAGE)
      .custom((v: number) => Math.min(v, MAX_PER_PAGE)),
    after,
    ...filters,
  });
}

/**
 * Runs one query that returns the page and, through a window count, the total. Only a page past
 * the end (no rows to carry the count) costs a second query.
 */
export async function paginate<M extends Model, V>(
  builder: QueryBuilder<M>,
  table: string,
  params: ListParams,
  view: (row: M) => V,
): Promise<Page<V>> {
  const filtered = builder.clone();
  if (typeof params.after === 'number') filtered.where(`${table}.id`, '>', params.after);
  else if (params.after instanceof Date) filtered.where(`${table}.created_at`, '>', toDbTime(params.after));

  const rows = (await filtered
    .clone()
    .select(`${table}.*`, raw('count(*) over () as list_total'))
    .orderBy(`${table}.id`)
    .limit(params.per_page)
    .offset((params.page - 1) * params.per_page)) as unknown as (M & { list_total?: number | string })[];

  let total: number;
  if (rows.length > 0) total = Number(rows[0].list_total);
  else total = params.page > 1 ? await filtered.resultSize() : 0;
  for (const row of rows) delete row.list_total;

  return {
    data: rows.map(view),
    meta: {
      current_page: params.page,
      per_page: params.per_page,
      total,
      last_page: Math.max(1, Math.ceil(total / params.per_page)),
    },
  };
}
