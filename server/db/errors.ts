/** Recognises constraint violations from either driver, so services can turn them into clear errors. */
function codeOf(err: unknown): string | undefined {
  const e = err as { code?: string; nativeError?: { code?: string } } | null;
  return e?.code ?? e?.nativeError?.code;
}

export function isUniqueViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A row still referenced by another (e.g. deleting a client that has invoices). */
export function isReferencedRowViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_ROW_IS_REFERENCED_2' || code === 'ER_ROW_IS_REFERENCED' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** A row naming a parent that does not exist (e.g. a client deleted between a check and an insert). */
export function isMissingReferenceViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_NO_REFERENCED_ROW_2' || code === 'ER_NO_REFERENCED_ROW' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
