/**
 * Tenancy by construction. A tenant table's rows are reached only through `Model.of(actor, conn)`
 * (the actor's business and mode) or `Model.acrossTenants(access, conn)` (a named system reason);
 * a child table's rows only through its parent rows (`InvoiceItem.ofInvoices(invoices, conn)`).
 * Any other query of these models throws when it is built, before SQL is sent: a query that forgot
 * its tenant is an error in tests, not a leak in production.
 */
import { Knex } from 'knex';
import { ModelClass, QueryBuilderType } from 'objection';
import { Actor, CrossTenantAccess } from '../auth/actor';
import { businessClock, Clock } from '../clock';
import { BaseModel } from './base-model';
import { insertRows, insertRowsNumbered, lockClause, selectRows, StoredRow } from './statement';

/** Thrown when a tenant or child model is queried without saying whose rows it may touch. */
export class UnscopedQuery extends Error {
  constructor(model: string) {
    super(`${model} was queried without a tenant: use ${model}.of(actor, conn) or ${model}.acrossTenants(access, conn)`);
    this.name = 'UnscopedQuery';
  }
}

interface AccessContext {
  /** How the query was scoped: set only by the gates below. */
  access?: string;
}

/**
 * The guard shared by tenant and child models: every query must carry an access stamp, or be one of
 * Objection's internal follow-up queries of a stamped query (e.g. the fetch after insertAndFetch).
 */
class GuardedModel extends BaseModel {
  /** A tenant's rows are dated by the clock of the business being acted for (a test mode's may be frozen). */
  static override rowClock: Clock = businessClock;

  /** Objection's hook for every query it creates of this model (not in its type declarations). */
  static onCreateQuery(query: QueryBuilderType<BaseModel>): void {
    const model = this.name;
    query.onBuild((builder) => {
      const parent = (builder as unknown as { parentQuery(): unknown }).parentQuery();
      if (!(builder.context() as AccessContext).access && !parent) throw new UnscopedQuery(model);
    });
  }

  /** A query of the rows of this model, stamped with how its scope was decided. */
  protected static stamped<M extends GuardedModel>(this: ModelClass<M>, conn: Knex, access: string): QueryBuilderType<M> {
    return this.query(conn).context({ access });
  }

  /** An instance was read through a gate: queries of that row (`row.$query(trx).patch(…)`) stay on it. */
  override $query(trx?: Knex) {
    return super.$query(trx).context({ access: 'instance' });
  }
}

/** A table whose rows belong to one business and one mode. */
export class TenantModel extends GuardedModel {
  static override booleanColumns = ['livemode'];

  business_id!: number;
  livemode!: boolean;

  /** Rows of the actor's business and mode only: another tenant's id simply does not exist. */
  static of<M extends TenantModel>(this: new () => M, actor: Actor, conn: Knex): QueryBuilderType<M> {
    const model = this as unknown as typeof TenantModel;
    return (model.stamped(conn, `${actor.kind}:${actor.businessId}`) as unknown as QueryBuilderType<M>)
      .where(`${model.tableName}.business_id`, actor.businessId)
      .where(`${model.tableName}.livemode`, actor.livemode);
  }

  /**
   * The actor's row with this id, or undefined: what `of(actor, conn).findById(id)` reads, by one
   * statement written once per model rather than a query built per call. `lock` keeps the row
   * share- or update-locked until commit. The reads of a record by its `{id}` take this path, where
   * building the query was a sixth of a request's time.
   */
  static async findOwn<M extends TenantModel>(
    this: new () => M,
    actor: Actor,
    conn: Knex,
    id: number,
    { lock }: { lock?: 'share' | 'update' } = {},
  ): Promise<M | undefined> {
    const model = this as unknown as typeof TenantModel;
    const sql = `select * from ${model.tableName} where id = ? and business_id = ? and livemode = ? limit 1${lockClause(conn, lock)}`;
    const [row] = await selectRows(conn, sql, [id, actor.businessId, actor.livemode ? 1 : 0]);
    return row && (model.fromDatabaseJson(row) as M);
  }

  /** The actor's rows with these ids (unknown ones, and other tenants', left out), by one statement per number of ids: `findOwn` for several. */
  static async findAllOwn<M extends TenantModel>(this: new () => M, actor: Actor, conn: Knex, ids: readonly number[]): Promise<M[]> {
    if (!ids.length) return [];
    const model = this as unknown as typeof TenantModel;
    const sql = `select * from ${model.tableName} where business_id = ? and livemode = ? and id in (${ids.map(() => '?').join(', ')})`;
    const rows = await selectRows(conn, sql, [actor.businessId, actor.livemode ? 1 : 0, ...ids]);
    return rows.map((row) => model.fromDatabaseJson(row) as M);
  }

  /** Rows of every tenant, for a reason that is written down (see CrossTenantReason). */
  static acrossTenants<M extends TenantModel>(this: new () => M, access: CrossTenantAccess, conn: Knex): QueryBuilderType<M> {
    const model = this as unknown as typeof TenantModel;
    return model.stamped(conn, `across:${access.reason}`) as unknown as QueryBuilderType<M>;
  }

  /**
   * One multi-row INSERT of the actor's rows (Objection batches inserts only on PostgreSQL). The
   * columns are given as stored: timestamps as database text, booleans as 1/0, which both drivers bind.
   */
  static async insertAll(actor: Actor, conn: Knex, rows: StoredRow[]): Promise<void> {
    const owner = { business_id: actor.businessId, livemode: actor.livemode ? 1 : 0 };
    if (rows.length) await insertRows(conn, this.tableName, rows.map((row) => ({ ...row, ...owner })));
  }

  /**
   * `insertAll` for rows of several businesses and modes, each with its owner (a sweep's transaction
   * records events of many): one INSERT. Returns each row's id in order when the database numbers
   * one INSERT's rows consecutively (see insertRowsNumbered), undefined otherwise.
   */
  static async insertOwned(conn: Knex, rows: readonly { owner: Actor; row: StoredRow }[]): Promise<number[] | undefined> {
    if (!rows.length) return [];
    return insertRowsNumbered(
      conn,
      this.tableName,
      rows.map(({ owner, row }) => ({ ...row, business_id: owner.businessId, livemode: owner.livemode ? 1 : 0 })),
    );
  }

  /**
   * One INSERT of a new row of the actor's, given as the model holds it (ISO timestamps, booleans,
   * JSON objects); `created_at` and `updated_at` are set. Returns the row, id included, as a read
   * would. The hot writes (an invoice, an event) take this path rather than an Objection insert,
   * which builds a query per call.
   */
  static async create<M extends TenantModel>(this: new () => M, actor: Actor, conn: Knex, fields: Partial<Omit<M, 'id'>>): Promise<M> {
    const model = this as unknown as typeof TenantModel;
    const row = model.fromJson({ ...fields, ...model.ownedBy(actor) }, { skipValidation: true }) as M;
    row.$beforeInsert();
    row.id = await insertRows(conn, model.tableName, [row.$toDatabaseJson()]);
    return row;
  }

  /** One INSERT of a row of the actor's, stored as given (as `insertAll`); returns it as a read would, id included. */
  static async insertOne<M extends TenantModel>(this: new () => M, actor: Actor, conn: Knex, row: StoredRow): Promise<M> {
    const model = this as unknown as typeof TenantModel;
    const stored = { ...row, business_id: actor.businessId, livemode: actor.livemode ? 1 : 0 };
    const id = await insertRows(conn, model.tableName, [stored]);
    return model.fromDatabaseJson({ ...stored, id }) as M;
  }

  /** The tenancy columns a new row of the actor gets. */
  static ownedBy(actor: Actor): { business_id: number; livemode: boolean } {
    return { business_id: actor.businessId, livemode: actor.livemode };
  }
}

/** A table whose rows belong to a parent tenant row and are reached only through it. */
export class ChildModel extends GuardedModel {
  /** The column naming the parent row. */
  static parentColumn: string;

  /** One multi-row INSERT of children of `parent` (a row the caller read through a tenant gate). */
  static async insertAll(parent: TenantModel, conn: Knex, rows: StoredRow[]): Promise<void> {
    if (rows.length) await insertRows(conn, this.tableName, rows.map((row) => ({ ...row, [this.parentColumn]: parent.id })));
  }

  /** One multi-row INSERT of a child of each parent (rows the caller read through a tenant gate). */
  static async insertOneEach<P extends TenantModel>(parents: readonly P[], conn: Knex, childOf: (parent: P, index: number) => StoredRow): Promise<void> {
    if (parents.length) await insertRows(conn, this.tableName, parents.map((parent, i) => ({ ...childOf(parent, i), [this.parentColumn]: parent.id })));
  }

  /**
   * `insertAll` for a parent whose children are all in `rows` (a new parent's, or a replacement set),
   * returning them in `order` as a read would; the read is made only where the database does not
   * number one insert's rows consecutively (see insertRowsNumbered).
   */
  protected static async insertAllOf<M extends ChildModel>(this: new () => M, parent: TenantModel, conn: Knex, rows: StoredRow[], order: string): Promise<M[]> {
    const model = this as unknown as typeof ChildModel;
    const children = rows.map((row) => ({ ...row, [model.parentColumn]: parent.id }));
    const ids = children.length ? await insertRowsNumbered(conn, model.tableName, children) : [];
    if (!ids) return (model as unknown as typeof ChildModel & (new () => M)).allOf<M>(parent, conn, order);
    return children.map((child, i) => model.fromDatabaseJson({ ...child, id: ids[i] }) as M);
  }

  /**
   * The children of one parent (a row the caller read through a tenant gate) in `order`: what
   * `ofParents([parent], conn).orderBy(order)` reads, by one statement written once per model and order.
   */
  protected static async allOf<M extends ChildModel>(this: new () => M, parent: TenantModel, conn: Knex, order: string): Promise<M[]> {
    const model = this as unknown as typeof ChildModel;
    const rows = await selectRows(conn, `select * from ${model.tableName} where ${model.parentColumn} = ? order by ${order}`, [parent.id]);
    return rows.map((row) => model.fromDatabaseJson(row) as M);
  }

  /** The children of these parents, which the caller read through a tenant gate. */
  protected static ofParents<M extends ChildModel>(this: new () => M, parents: readonly TenantModel[], conn: Knex): QueryBuilderType<M> {
    const model = this as unknown as typeof ChildModel;
    return (model.stamped(conn, 'parent') as unknown as QueryBuilderType<M>).whereIn(
      `${model.tableName}.${model.parentColumn}`,
      parents.map((parent) => parent.id),
    );
  }
}
