/** Polls `check` until it holds, and returns how long that took; fails after `withinMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, withinMs = 15_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - started;
}
