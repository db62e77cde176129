/**
 * The yardstick: a bare Express + mysql2 server answering the two client reads with hand-written SQL
 * (key lookup by hash, then the record, or the page and its count), no framework of ours around it.
 */
import { createHash } from 'node:crypto';
import express from 'express';
import mysql, { RowDataPacket } from 'mysql2/promise';

const [databaseUrl, port] = [process.argv[2], Number(process.argv[3])];
const pool = mysql.createPool({ uri: databaseUrl, connectionLimit: 10, dateStrings: true });
const app = express();

async function business(authorization: string | undefined): Promise<RowDataPacket | undefined> {
  const token = authorization?.replace(/^Bearer /, '') ?? '';
  const hash = createHash('sha256').update(token).digest('hex');
  const [rows] = await pool.query<RowDataPacket[]>('SELECT business_id, livemode FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL', [hash]);
  return rows[0];
}

app.get('/clients/:id', async (req, res) => {
  const key = await business(req.get('authorization'));
  if (!key) return void res.status(401).json({ error: 'unauthorized' });
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT id, name, email, phone, company, address, livemode, created_at, updated_at FROM clients WHERE id = ? AND business_id = ? AND livemode = ?',
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
    'SELECT id, name, email, phone, company, address, livemode, created_at, updated_at FROM clients WHERE business_id = ? AND livemode = ? ORDER BY id LIMIT ?',
    [key.business_id, key.livemode, perPage],
  );
  const [[count]] = await pool.query<RowDataPacket[]>('SELECT COUNT(*) AS total FROM clients WHERE business_id = ? AND livemode = ?', [
    key.business_id,
    key.livemode,
  ]);
  res.json({ data: rows, meta: { current_page: 1, per_page: perPage, total: count.total, last_page: Math.ceil(count.total / perPage) } });
});

app.listen(port, '127.0.0.1', () => process.stdout.write(`baseline listening on ${port}\n`));
