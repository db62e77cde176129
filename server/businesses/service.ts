/** Businesses: the tenants. Created by the CLI; read by the API through the caller's credential. */
import { Actor } from '../auth/actor';
import { BusinessClocks } from '../db/clocks';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { Business, storedReminderOffsets } from './model';
import { BusinessChanges, BusinessProfile, BusinessView, LEGAL_IDENTITY_FIELDS, NewBusiness } from './schema';
import { toBusinessProfile, toBusinessView } from './view';

/** The plan of a business created without one. */
const DEFAULT_PLAN = 'free';

export class BusinessService {
  constructor(
    private readonly db: Database,
    /** Dates a change of reminder offsets in each mode's time. */
    private readonly clocks: BusinessClocks,
  ) {}

  /** `input` is valid by newBusinessSchema. The record, as `business create` and `init` print it. */
  async create(input: NewBusiness): Promise<BusinessView> {
    const row = await Business.query(this.db.current).insert({ ...input, country: input.country ?? null, plan: input.plan ?? DEFAULT_PLAN });
    return toBusinessView(row);
  }

  /** The profile: the business and its legal identity. */
  async get(id: number): Promise<BusinessProfile> {
    const row = await Business.query(this.db.current).findById(id);
    if (!row) throw new NotFound('Business', id);
    return toBusinessProfile(row);
  }

  /** Every business's record, oldest first (the CLI's `business list`). */
  async list(): Promise<BusinessView[]> {
    const rows = await Business.query(this.db.current).orderBy('id');
    return rows.map(toBusinessView);
  }

  /**
   * `changes` are valid by businessChangesSchema. Existing invoices keep their own currency; a new
   * currency applies to what is created next. New reminder offsets are dated in each mode's time:
   * a reminder whose date was before then is never sent (server/invoices/reminders.ts).
   */
  async update(id: number, changes: BusinessChanges): Promise<BusinessProfile> {
    const setAt = changes.reminder_offsets === undefined ? undefined : await this.reminderSettingTimes(id);
    return this.db.transaction(async (trx) => {
      if (!(await Business.query(trx).findById(id).forUpdate())) throw new NotFound('Business', id);
      const { embed_origins: origins, einvoice_format: format, reminder_offsets: offsets, ...rest } = changes;
      const patch: Partial<Business> = {
        ...rest,
        ...(origins === undefined ? {} : { embed_origins: origins === null ? null : origins.join(' ') }),
        ...(format === undefined ? {} : { einvoice_format: format === 'none' ? null : format }),
        ...(offsets === undefined ? {} : { reminder_offsets: storedReminderOffsets(offsets), ...setAt }),
      };
      // A country or a legal identity field given empty is cleared.
      for (const field of ['country', ...LEGAL_IDENTITY_FIELDS] as const) {
        if (patch[field] === '') patch[field] = null;
      }
      return toBusinessProfile(await Business.query(trx).patchAndFetchById(id, patch));
    });
  }

  /** Now in each mode of the business: the real time live, a test mode's frozen time where one is set. */
  private async reminderSettingTimes(id: number): Promise<Pick<Business, 'reminders_set_at_live' | 'reminders_set_at_test'>> {
    const [live, test] = await Promise.all([true, false].map((livemode) => this.clocks.of({ businessId: id, livemode })));
    return { reminders_set_at_live: live.now().toISOString(), reminders_set_at_test: test.now().toISOString() };
  }

  /** The origins allowed to frame the business's embeddable signing page; null: any. */
  async embedOrigins(id: number): Promise<string[] | null> {
    const row = await Business.query(this.db.current).findById(id);
    if (!row) throw new NotFound('Business', id);
    return row.embed_origins ? row.embed_origins.split(' ') : null;
  }

  /** The caller's own business: `GET /business` and `GET /ping`. */
  ofCredential(actor: Actor): Promise<BusinessProfile> {
    return this.get(actor.businessId);
  }
}
