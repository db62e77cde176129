/** The Objection base model: timestamps and booleans read the same from both drivers (tenancy: tenant-model.ts). */
import { Model, Pojo } from 'objection';
import { Clock, systemClock } from '../clock';
import { fromDbTime, toDbTime } from './time';

export class BaseModel extends Model {
  /** Columns holding timestamps: ISO 8601 in the model, UTC text in the database. */
  static timestampColumns: string[] = ['created_at', 'updated_at'];
  static booleanColumns: string[] = [];
  /**
   * What dates `created_at` and `updated_at`: the real time for the platform's own rows (keys, owners,
   * idempotency records, whose times are compared with the real time); tenant rows take their business's.
   */
  static rowClock: Clock = systemClock;

  id!: number;
  created_at!: string;
  updated_at!: string;

  override $beforeInsert(): void {
    const now = (this.constructor as typeof BaseModel).rowClock.now().toISOString();
    this.created_at = now;
    this.updated_at = now;
  }

  override $beforeUpdate(): void {
    this.updated_at = (this.constructor as typeof BaseModel).rowClock.now().toISOString();
  }

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    const cls = this.constructor as typeof BaseModel;
    for (const column of cls.timestampColumns) {
      if (column in parsed) parsed[column] = fromDbTime(parsed[column] as string | Date | null);
    }
    for (const column of cls.booleanColumns) {
      if (column in parsed && parsed[column] !== null) parsed[column] = Boolean(Number(parsed[column]));
    }
    return parsed;
  }

  override $formatDatabaseJson(json: Pojo): Pojo {
    const formatted = super.$formatDatabaseJson(json);
    const cls = this.constructor as typeof BaseModel;
    for (const column of cls.timestampColumns) {
      if (typeof formatted[column] === 'string') formatted[column] = toDbTime(new Date(formatted[column]));
    }
    for (const column of cls.booleanColumns) {
      if (typeof formatted[column] === 'boolean') formatted[column] = formatted[column] ? 1 : 0;
    }
    return formatted;
  }
}
