/** A throwaway self-signed certificate for 127.0.0.1 and localhost, made with the openssl command. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface SelfSigned {
  key: string;
  cert: string;
}

let pending: Promise<SelfSigned> | undefined;

/** One certificate per test process: every HTTPS store of the run can share it, and clients trust it once. */
export function selfSignedCertificate(): Promise<SelfSigned> {
  pending ??= generate().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return pending;
}

async function generate(): Promise<SelfSigned> {
  const dir = await mkdtemp(join(tmpdir(), 'woo-double-tls-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]);
    return { key: await readFile(keyFile, 'utf8'), cert: await readFile(certFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
