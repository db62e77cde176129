/**
 * The yardstick: a bare Express + mysql2 server with hand-written SQL and no framework of ours around
 * it. Every request looks its key up by hash. The two client reads fetch the record, or the page and
 * its count; the two writes do the database work of ours in one transaction: the Idempotency-Key's
 * row (inserted first, completed with the response), and for POST /invoices a check of the client,
 * the invoice, its items in one statement and an `invoice.created` event;
 * POST /quick-charge finds the client by e-mail (or inserts it), then does the same for an issued
 * invoice, drawing its number from the business row.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import mysql, { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';

const [databaseUrl, port] = [process.argv[2], Number(process.argv[3])];
const pool = mysql.createPool({ uri: databaseUrl, connectionLimit: 10, dateStrings: true, timezone: 'Z', charset: 'utf8mb4' });
const app = express();
app.use(express.json({ limit: '1mb' }));

interface Key {
  id: number;
  business_id: number;
  livemode: number;
  scopes: string;
}

async function business(authorization: string | undefined): Promise<Key | undefined> {
  const token = authorization?.replace(/^Bearer /, '') ?? '';
  const hash = createHash('sha256').update(token).digest('hex');
  const [rows] = await pool.query<RowDataPacket[]>('SELECT id, business_id, livemode, scopes FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL', [
    hash,
  ]);
  return rows[0] as Key | undefined;
}

/** The columns our client view shows, selected as they are stored (ours converts timestamps, booleans and metadata). */
const SHOWN_CLIENT_COLUMNS =
  'id, name, email, phone, company, address, city, postal_code, state, country, tax_id, tax_exempt, buyer_reference, peppol_id, metadata, livemode, created_at, updated_at';

app.get('/clients/:id', async (req, res) => {
  const key = await business(req.get('authorization'));
  if (!key) return void res.status(401).json({ error: 'unauthorized' });
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT ${SHOWN_CLIENT_COLUMNS} FROM clients WHERE id = ? AND business_id = ? AND livemode = ?`,
    [Number(req.params.id), key.business_id, key.livemode],
  );
  if (!rows[0]) return void res.status(404).json({ error: 'not_found' });
  res.json({ client: rows[0] });
});

app.get('/clients', async (req, res) => {
  const key = await business(req.get('authorization'));
  if (!key) return void res.status(401).json({ error: 'unauthorized' });
  const perPage = Math.min(Number(req.query.per_page ?? 20), 100);
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT ${SHOWN_CLIENT_COLUMNS} FROM clients WHERE business_id = ? AND livemode = ? ORDER BY id LIMIT ?`,
    [key.business_id, key.livemode, perPage],
  );
  const [[count]] = await pool.query<(RowDataPacket & { total: number })[]>('SELECT COUNT(*) AS total FROM clients WHERE business_id = ? AND livemode = ?', [
    key.business_id,
    key.livemode,
  ]);
  res.json({ data: rows, meta: { current_page: 1, per_page: perPage, total: count.total, last_page: Math.ceil(count.total / perPage) } });
});

/** `2026-11-21 13:00:00.000` (what we store) ↔ ISO 8601 (what we show). */
const toDb = (iso: string) => iso.replace('T', ' ').replace('Z', '');
const fromDb = (db: string | null) => (db === null ? null : `${db.replace(' ', 'T')}Z`);

const EXPONENTS: Record<string, number> = { USD: 2, EUR: 2, GBP: 2, JPY: 0 };
const QUANTITY_SCALE = 10_000n;

class Invalid extends Error {}

/** A JSON number of major units → integer minor units, refusing more decimals than the currency has. */
function minor(amount: unknown, exponent: number): number {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new Invalid('amount must be a number');
  const scaled = amount * 10 ** exponent;
  const rounded = Math.round(scaled);
  if (Math.abs(scaled - rounded) > 1e-6) throw new Invalid('too many decimals');
  return rounded;
}

/** quantity (ten-thousandths) × unit price, rounded half away from zero, in exact integer arithmetic. */
function lineAmount(quantityUnits: number, unitPrice: number): number {
  const product = BigInt(quantityUnits) * BigInt(unitPrice);
  const magnitude = ((product < 0n ? -product : product) + QUANTITY_SCALE / 2n) / QUANTITY_SCALE;
  return Number(product < 0n ? -magnitude : magnitude);
}

interface InvoiceRequest {
  client_id: number;
  currency: string;
  due_date?: string;
  items: { description: string; quantity: number; unit_price: number }[];
}

/**
 * The invoice, its items and its `invoice.created` event on `conn`, inside the caller's transaction,
 * as the JSON we show. `issue`: numbered and `sent` (the number is drawn first, so the business row
 * is locked before the inserts' foreign-key checks share-lock it). Undefined: not a client of the key.
 */
async function insertInvoice(conn: PoolConnection, key: Key, input: InvoiceRequest, issue: boolean) {
  const [clients] = await conn.query<RowDataPacket[]>('SELECT id FROM clients WHERE id = ? AND business_id = ? AND livemode = ?', [
    input.client_id,
    key.business_id,
    key.livemode,
  ]);
  if (!clients[0]) return undefined;
  const exponent = EXPONENTS[input.currency];
  if (exponent === undefined || !Array.isArray(input.items) || !input.items.length) throw new Invalid('currency and items are required');
  const items = input.items.map((item, index) => {
    const quantityUnits = Math.round(item.quantity * Number(QUANTITY_SCALE));
    const unitPrice = minor(item.unit_price, exponent);
    return { position: index + 1, description: item.description, quantity_units: quantityUnits, unit_price: unitPrice, amount: lineAmount(quantityUnits, unitPrice) };
  });
  const total = items.reduce((sum, item) => sum + item.amount, 0);
  const now = new Date().toISOString();
  const issueDate = now.slice(0, 10);
  const dueDate = input.due_date ?? new Date(Date.parse(issueDate) + 30 * 86_400_000).toISOString().slice(0, 10);

  let number: string | null = null;
  if (issue) {
    const column = key.livemode ? 'last_invoice_number_live' : 'last_invoice_number_test';
    await conn.query(`UPDATE businesses SET ${column} = ${column} + 1 WHERE id = ?`, [key.business_id]);
    const [[counter]] = await conn.query<RowDataPacket[]>(`SELECT ${column} AS n FROM businesses WHERE id = ?`, [key.business_id]);
    number = `INV-${String(counter.n).padStart(6, '0')}`;
  }
  const status = issue ? 'sent' : 'draft';
  const sentAt = issue ? now : null;
  const paymentToken = randomBytes(32).toString('base64url');
  const [inserted] = await conn.query<ResultSetHeader>(
    `INSERT INTO invoices (business_id, livemode, client_id, number, status, currency, issue_date, due_date, subtotal, total,
       amount_paid, notes, payment_token, sent_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, ?)`,
    [key.business_id, key.livemode, input.client_id, number, status, input.currency, issueDate, dueDate, total, total, paymentToken, sentAt && toDb(sentAt), toDb(now), toDb(now)],
  );
  const invoiceId = inserted.insertId;
  const [insertedItems] = await conn.query<ResultSetHeader>(
    'INSERT INTO invoice_items (invoice_id, position, description, quantity_units, unit_price, amount) VALUES ?',
    [items.map((item) => [invoiceId, item.position, item.description, item.quantity_units, item.unit_price, item.amount])],
  );
  const major = (value: number) => value / 10 ** exponent;
  const invoice = {
    id: invoiceId,
    number,
    client_id: input.client_id,
    status,
    currency: input.currency,
    issue_date: issueDate,
    due_date: dueDate,
    // One multi-row INSERT takes consecutive ids (innodb_autoinc_lock_mode 0 or 1, MariaDB's default).
    items: items.map((item, index) => ({
      id: insertedItems.insertId + index,
      description: item.description,
      quantity: item.quantity_units / Number(QUANTITY_SCALE),
      unit_price: major(item.unit_price),
      amount: major(item.amount),
    })),
    subtotal: major(total),
    total: major(total),
    amount_paid: 0,
    amount_due: major(total),
    notes: null,
    livemode: Boolean(key.livemode),
    sent_at: sentAt,
    viewed_at: null,
    paid_at: null,
    voided_at: null,
    created_at: now,
    updated_at: now,
    payments: [],
  };
  await conn.query(
    'INSERT INTO events (business_id, livemode, type, idempotency_key, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [key.business_id, key.livemode, 'invoice.created', randomUUID(), JSON.stringify({ invoice }), toDb(now), toDb(now)],
  );
  return { invoice, paymentUrl: `http://127.0.0.1:${port}/pay/${paymentToken}` };
}

/**
 * Runs `work` in a transaction on one pooled connection; 422 for invalid input, 409 for an
 * Idempotency-Key already used, 500 otherwise. With an Idempotency-Key, its row is inserted first
 * and completed with the response in the same transaction.
 */
async function transaction(req: express.Request, res: express.Response, key: Key, work: (conn: PoolConnection) => Promise<unknown>): Promise<unknown> {
  const conn = await pool.getConnection();
  try {
    await conn.beginTransaction();
    const idempotencyKey = req.get('idempotency-key');
    let recordId: number | undefined;
    if (idempotencyKey) {
      const now = Date.now();
      const fingerprint = createHash('sha256').update(JSON.stringify({ method: req.method, path: req.path, body: req.body as unknown })).digest('hex');
      const [claimed] = await conn.query<ResultSetHeader>(
        `INSERT INTO idempotency_keys (subject, idempotency_key, fingerprint, owner, state, created_at, updated_at, expires_at)
         VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?)`,
        [`key_${key.id}`, idempotencyKey, fingerprint, randomUUID(), toDb(new Date(now).toISOString()), toDb(new Date(now).toISOString()), toDb(new Date(now + 86_400_000).toISOString())],
      );
      recordId = claimed.insertId;
    }
    const answer = await work(conn);
    if (recordId !== undefined) {
      await conn.query("UPDATE idempotency_keys SET state = 'completed', response_status = 201, response_body = ? WHERE id = ?", [JSON.stringify(answer), recordId]);
    }
    await conn.commit();
    return answer;
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    if (err instanceof Invalid) return void res.status(422).json({ error: 'validation_failed', message: err.message });
    if ((err as { code?: string }).code === 'ER_DUP_ENTRY') return void res.status(409).json({ error: 'idempotency_key_in_use' });
    process.stderr.write(`baseline: ${err instanceof Error ? err.message : String(err)}\n`);
    res.status(500).json({ error: 'internal' });
  } finally {
    conn.release();
  }
}

const canWriteInvoices = (key: Key) => (JSON.parse(key.scopes) as string[]).includes('invoices:write');

app.post('/invoices', async (req, res) => {
  const key = await business(req.get('authorization'));
  if (!key) return void res.status(401).json({ error: 'unauthorized' });
  if (!canWriteInvoices(key)) return void res.status(403).json({ error: 'forbidden' });
  const answer = await transaction(req, res, key, async (conn) => {
    const created = await insertInvoice(conn, key, req.body as InvoiceRequest, false);
    if (!created) throw new Invalid('client_id does not name a client of this business');
    return { invoice: created.invoice };
  });
  if (answer && !res.headersSent) res.status(201).json(answer);
});

const CLIENT_COLUMNS = 'id, name, email, phone, company, address, livemode, created_at, updated_at';

/** A row of CLIENT_COLUMNS. */
interface ClientRow extends RowDataPacket {
  id: number;
  name: string;
  email: string;
  phone: string | null;
  company: string | null;
  address: string | null;
  livemode: number;
  created_at: string;
  updated_at: string;
}

app.post('/quick-charge', async (req, res) => {
  const key = await business(req.get('authorization'));
  if (!key) return void res.status(401).json({ error: 'unauthorized' });
  if (!canWriteInvoices(key)) return void res.status(403).json({ error: 'forbidden' });
  const body = req.body as { amount: number; currency: string; description?: string; due_date?: string; client: { name: string; email: string } };
  const answer = await transaction(req, res, key, async (conn) => {
    const email = body.client.email.toLowerCase();
    const byEmail = (lock: string) =>
      conn.query<ClientRow[]>(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE business_id = ? AND livemode = ? AND email_normalized = ? ${lock}`, [
        key.business_id,
        key.livemode,
        email,
      ]);
    let [[client]] = await byEmail('');
    if (!client) {
      const now = toDb(new Date().toISOString());
      try {
        const [inserted] = await conn.query<ResultSetHeader>(
          `INSERT INTO clients (business_id, livemode, name, email, email_normalized, search_text, phone, company, address, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?)`,
          [key.business_id, key.livemode, body.client.name, body.client.email, email, `${body.client.name}\n${body.client.email}\n`.toLowerCase(), now, now],
        );
        client = { id: inserted.insertId, name: body.client.name, email: body.client.email, phone: null, company: null, address: null, livemode: key.livemode, created_at: now, updated_at: now } as ClientRow;
      } catch (err) {
        // A concurrent checkout created it first: read the winner's committed row.
        if ((err as { code?: string }).code !== 'ER_DUP_ENTRY') throw err;
        [[client]] = await byEmail('LOCK IN SHARE MODE');
      }
    }
    const issued = await insertInvoice(
      conn,
      key,
      { client_id: client.id, currency: body.currency, due_date: body.due_date, items: [{ description: body.description ?? 'Payment', quantity: 1, unit_price: body.amount }] },
      true,
    );
    if (!issued) throw new Invalid('no such client');
    return {
      invoice: issued.invoice,
      client: { ...client, livemode: Boolean(client.livemode), created_at: fromDb(client.created_at), updated_at: fromDb(client.updated_at) },
      payment_url: issued.paymentUrl,
    };
  });
  if (answer && !res.headersSent) res.status(201).json(answer);
});

app.listen(port, '127.0.0.1', () => process.stdout.write(`baseline listening on ${port}\n`));

// Exiting on SIGTERM, rather than being killed by it, lets `--cpu-prof` (BENCH_NODE_ARGS) write its profile.
process.on('SIGTERM', () => process.exit(0));
