/** Recognises a unique-index violation from either driver, so services can turn it into a field error. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number; nativeError?: { code?: string } } | null;
  const code = e?.code ?? e?.nativeError?.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
