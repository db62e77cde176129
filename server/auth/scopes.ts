/** The scopes of the specification, and the rule that a :write scope also grants its :read. */
export const ALL_SCOPES = [
  'invoices:read',
  'invoices:write',
  'contracts:read',
  'contracts:write',
  'clients:read',
  'clients:write',
  'payments:read',
  'payments:write',
  'expenses:read',
  'expenses:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

/** Every :read scope: what "any read scope" accepts. */
export const READ_SCOPES: readonly Scope[] = ALL_SCOPES.filter((scope) => scope.endsWith(':read'));

/** Every :write scope: what "any :write scope" accepts. */
export const WRITE_SCOPES: readonly Scope[] = ALL_SCOPES.filter((scope) => scope.endsWith(':write'));

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

export function grants(held: readonly Scope[], wanted: Scope): boolean {
  if (held.includes(wanted)) return true;
  return wanted.endsWith(':read') && held.includes(wanted.replace(/:read$/, ':write') as Scope);
}
