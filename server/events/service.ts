/** The event log a partner reads back (`GET /events`): what a receiver that missed deliveries catches up from. */
import { Actor } from '../auth/actor';
import { Credential } from '../auth/credential';
import { businessClock, Clock, startStopwatch } from '../clock';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { Page, paginate } from '../http/pagination';
import { Event } from './model';
import { Outbox, readableEventTypes } from './outbox';
import { EventListParams, EventPayload } from './schema';
import { toEventPayload } from './view';
import { EventWatch } from './watch';

/** How far back `GET /events` reaches. */
export const EVENT_LOG_DAYS = 30;

export class EventService {
  private readonly watch: EventWatch;

  constructor(
    private readonly db: Database,
    outbox: Outbox,
    private readonly clock: Clock,
  ) {
    this.watch = new EventWatch(db);
    outbox.wakeAtCommit(this.watch);
  }

  /**
   * `list`; while its page is empty and `wait` seconds have not passed, reads again when an event of
   * the business and mode commits (seen by its watch: at once in this process, within an interval
   * from another). `webhooks listen` reads the log this way, from the last event id it saw, so a
   * reconnect leaves no gap. A credential with MAX_WAITS_PER_CREDENTIAL polls waiting already is
   * answered at once; a poll whose client has `gone` stops waiting, freeing its place.
   */
  async listOrWait(cred: Credential, params: EventListParams, gone?: AbortSignal): Promise<Page<EventPayload>> {
    const poll = params.wait ? await this.watch.join(cred) : null;
    if (!poll) return this.list(cred, params);
    try {
      const waiting = startStopwatch();
      for (;;) {
        const seen = poll.version;
        const page = await this.list(cred, params);
        const left = params.wait * 1000 - waiting.elapsedMs();
        if (page.data.length || left <= 0 || gone?.aborted) return page;
        await poll.changed(seen, left, gone);
        if (gone?.aborted) return page;
      }
    } finally {
      poll.leave();
    }
  }

  /** The id of the actor's business and mode's newest event, 0 when it has none: where a reader that wants only new events starts. */
  async newestId(actor: Actor): Promise<number> {
    const newest = await Event.of(actor, this.db.current).orderBy('events.id', 'desc').select('events.id').first();
    return newest?.id ?? 0;
  }

  /**
   * The credential's business and mode's events of the last 30 days, oldest first (pass the last id
   * as `after` to read on), of the types its scopes read: the others are left out, as they are from
   * its webhook deliveries. Events are dated by the business's clock, which a test mode may have
   * frozen behind the real time or moved ahead of it: the 30 days count back from the earlier of the
   * real time and the business's (the request's clock), so a frozen test mode's events, and those a
   * test clock's advance dated ahead of the real time, stay listed as long as a real time's would.
   */
  list(cred: Credential, params: EventListParams): Promise<Page<EventPayload>> {
    const now = Math.min(this.clock.now().getTime(), businessClock.now().getTime());
    const since = new Date(now - EVENT_LOG_DAYS * 86_400_000);
    const query = Event.of(cred, this.db.current).where('events.created_at', '>=', toDbTime(since)).whereIn('events.type', readableEventTypes(cred.scopes));
    if (params.type) query.where('events.type', params.type);
    return paginate(query, Event.tableName, params, toEventPayload);
  }
}
