/** What the benchmarks share: starting a server process and waiting until it answers. */
import { ChildProcess, spawn } from 'node:child_process';

/** Starts a server process and resolves once it answers HTTP. Its output (logs) goes nowhere. */
export async function startProcess(command: string[], env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, command, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`))));
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await Promise.race([
      fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false),
      exited,
    ]);
    if (answered) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`${command.join(' ')} did not start`);
}
