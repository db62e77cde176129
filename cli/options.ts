/** Parsers for option values shared by the commands; a bad value is a usage error (exit 2). */
import { ALL_SCOPES, isScope, Scope } from '../server/auth/scopes';
import { UsageError } from './errors';

export function positiveId(value: string, what: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value.trim())) throw new UsageError(`${what} must be a positive integer`);
  return Number(value.trim());
}

/** `all`, or a comma list of scope names. */
export function parseScopes(value: string, flag = '--scopes'): Scope[] {
  if (value.trim() === 'all') return [...ALL_SCOPES];
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length || scopes.length === 0) {
    throw new UsageError(`${flag}: unknown scope(s) ${unknown.join(', ') || '(none given)'}; use "all" or a comma list of: ${ALL_SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)] as Scope[];
}

export function parseMode(value: string): 'test' | 'live' {
  if (value !== 'test' && value !== 'live') throw new UsageError('--mode must be test or live');
  return value;
}
