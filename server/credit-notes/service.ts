/**
 * Credit notes: numbered corrections of an issued invoice. One is priced by the one tax engine under
 * the invoice's tax rules and buyer, first lowers what the invoice still asks for, and refunds the
 * rest from the invoice's payments or records it as settled outside the service; then the invoice's
 * status follows from its money (invoices/status.ts). The note, the invoice's change, the refunds
 * booked or reserved and the events commit in one transaction; a gateway is asked for its refunds
 * after the commit (refunds/service.ts), never inside it.
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { Actor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { firstPagesByMode, Page, paginate } from '../http/pagination';
import { invoiceDetail } from '../invoices/detail';
import { InvoiceDocuments } from '../invoices/documents';
import type { CreditNoteDocument } from '../invoices/pdf';
import { InvoiceLinks } from '../invoices/links';
import { amountDue, Invoice, InvoiceItem } from '../invoices/model';
import { drawCreditNoteNumber } from '../invoices/numbering';
import { PricedItem, priceInvoice, rateIdsOf } from '../invoices/pricing';
import { ItemInput } from '../invoices/schema';
import { InvoiceService } from '../invoices/service';
import { bookMoney } from '../invoices/settlement';
import { initialMetadata } from '../metadata/store';
import { AmountProblem, fromQuantityUnits, toMajor, toQuantityUnits } from '../money/amount';
import { TaxRateTerms } from '../money/tax';
import { PdfFile } from '../pdf/pool';
import { Refund } from '../refunds/model';
import { RefundService } from '../refunds/service';
import { TaxRateService } from '../tax-rates/service';
import { CreditNote, CreditNoteItem } from './model';
import { CreditNoteInput, CreditNoteLineInput, CreditNoteListParams, CreditNoteResult, CreditNoteView, isCopiedLine, VoidedInvoice } from './schema';
import { toCreditNoteView } from './view';

/** The statuses of an invoice a credit note may correct: issued, and not void. */
const CREDITABLE = ['sent', 'viewed', 'partial', 'paid'];

/** A line about to be priced: the engine's input, and the invoice line it credits. */
interface PlannedLine {
  input: ItemInput;
  invoiceItemId: number | null;
}

export class CreditNoteService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly outbox: Outbox,
    private readonly invoices: InvoiceService,
    private readonly refunds: RefundService,
    private readonly taxRates: TaxRateService,
    private readonly links: InvoiceLinks,
    private readonly documents: InvoiceDocuments,
    private readonly logger: Logger,
  ) {}

  async list(actor: Actor, params: CreditNoteListParams): Promise<Page<CreditNoteView>> {
    const query = CreditNote.of(actor, this.db.current);
    if (params.invoice_id) query.where('credit_notes.invoice_id', params.invoice_id);
    if (params.client_id) query.where('credit_notes.client_id', params.client_id);
    const page = await paginate(query, CreditNote.tableName, params, (row) => row);
    return { ...page, data: await this.views(actor, page.data, this.db.current) };
  }

  async get(actor: Actor, id: number): Promise<CreditNoteView> {
    const [view] = await this.views(actor, [await this.find(actor, id)], this.db.current);
    return view;
  }

  /** `invoicing credit-notes list`: a business's credit notes, in one mode or both, oldest first (100 per mode at most). */
  async listForOwner(businessId: number, filters: { mode?: 'live' | 'test'; invoice_id?: number }): Promise<{ data: CreditNoteView[]; more: boolean }> {
    await this.businesses.get(businessId);
    return firstPagesByMode(businessId, filters.mode, (actor, page) => this.list(actor, { ...page, ...(filters.invoice_id ? { invoice_id: filters.invoice_id } : {}) }));
  }

  /** `invoicing credit-notes create`: a credit note of this business and mode's invoice. */
  async createForOwner(businessId: number, mode: 'live' | 'test', invoiceId: number, input: CreditNoteInput): Promise<CreditNoteResult> {
    await this.businesses.get(businessId);
    return this.create(systemActor('cli', { businessId, livemode: mode === 'live' }), invoiceId, input);
  }

  /** `invoicing credit-notes create` without lines: what earlier credit notes left of each line of the invoice, in full. */
  async remainingLinesForOwner(businessId: number, mode: 'live' | 'test', invoiceId: number): Promise<CreditNoteLineInput[]> {
    await this.businesses.get(businessId);
    const actor = systemActor('cli', { businessId, livemode: mode === 'live' });
    const invoice = await Invoice.findOwn(actor, this.db.current, invoiceId);
    if (!invoice) throw new NotFound('Invoice', invoiceId);
    return this.linesLeft(actor, this.db.current, invoice, await InvoiceItem.ofInvoice(invoice, this.db.current));
  }

  /**
   * `POST /invoices/{id}/credit-notes`. Refunds that a gateway makes are asked for after the commit:
   * one whose outcome stays unknown leaves its refund pending (the reconciliation settles it), and
   * the credit note stands either way.
   */
  async create(actor: Actor, invoiceId: number, input: CreditNoteInput): Promise<CreditNoteResult> {
    const made = await this.db.transaction(async (trx) => {
      const invoice = await this.lockInvoice(trx, actor, invoiceId);
      if (!CREDITABLE.includes(invoice.status)) throw new InvalidState(`Only an issued invoice can be credited; this one is ${invoice.status}`);
      return this.issue(trx, actor, invoice, input);
    });
    if (!made.reserved.length) return made.result;
    for (const refund of made.reserved) {
      await this.refunds.sendReserved(actor, refund).catch((err: unknown) => {
        // Refused (released) or unknown (pending, for the reconciliation): the refund says which.
        this.logger.warn({ err, businessId: actor.businessId, refundId: refund.id, creditNoteId: made.result.credit_note.id }, "a credit note's refund was not made at once");
      });
    }
    const invoice = await Invoice.findOwn(actor, this.db.current, invoiceId);
    return { credit_note: made.result.credit_note, invoice: await invoiceDetail(actor, invoice!, this.db.current, this.links) };
  }

  /**
   * `POST /invoices/{id}/void`: a draft is voided as it is; an issued invoice with nothing paid is
   * cancelled by a credit note for what its earlier credit notes left uncredited (reason `other`,
   * memo `Cancelled`), which voids it by the one rule, so the numbered series keeps the cancellation.
   */
  async voidInvoice(actor: Actor, invoiceId: number): Promise<VoidedInvoice> {
    return this.db.transaction(async (trx) => {
      const invoice = await this.lockInvoice(trx, actor, invoiceId);
      if (invoice.status === 'void') throw new InvalidState('This invoice is already void');
      if (invoice.amount_paid > 0) {
        throw new InvalidState(`A ${invoice.status} invoice has payments and cannot be voided; refund them first, or credit it with refund: true`);
      }
      if (invoice.status === 'draft' || invoice.total - invoice.amount_credited <= 0) {
        return { invoice: await this.invoices.voidLocked(trx, actor, invoice), credit_note: null };
      }
      const items = await this.linesLeft(actor, trx, invoice, await InvoiceItem.ofInvoice(invoice, trx));
      // Every line already credited in full, with a few minor units of rounding left: one line for them.
      const lines = items.length ? items : [{ description: `Cancellation of ${invoice.number}`, quantity: 1, unit_price: toMajor(invoice.total - invoice.amount_credited, invoice.currency) }];
      const { result } = await this.issue(trx, actor, invoice, { items: lines, reason: 'other', memo: 'Cancelled' });
      return result;
    });
  }

  /** The PDF of the actor's credit note `id`. */
  async pdf(actor: Actor, id: number): Promise<PdfFile> {
    return this.documents.creditNotePdf(await this.document(actor, id));
  }

  /** What the credit note's PDF shows (its Factur-X PDF too). */
  async document(actor: Actor, id: number): Promise<CreditNoteDocument> {
    const note = await this.find(actor, id);
    const [items, invoice] = await Promise.all([CreditNoteItem.ofCreditNotes([note], this.db.current).orderBy('position'), Invoice.findOwn(actor, this.db.current, note.invoice_id)]);
    if (!invoice) throw new NotFound('Invoice', note.invoice_id);
    return { creditNote: note, items, seller: note.seller, invoiceNumber: invoice.number ?? '', references: invoice };
  }

  /**
   * Prices and stores the credit note on a locked, creditable invoice, books it on the invoice, and
   * refunds or records what it does not apply. Returns the gateway refunds reserved, for the caller
   * to send once the transaction has committed.
   */
  private async issue(trx: Knex.Transaction, actor: Actor, invoice: Invoice, input: CreditNoteInput): Promise<{ result: CreditNoteResult; reserved: Refund[] }> {
    const wasPaid = invoice.status === 'paid';
    const invoiceItems = await InvoiceItem.ofInvoice(invoice, trx);
    const errors = new Map<string, string[]>();
    const { lines, completesInvoice } = await this.plan(trx, actor, invoice, invoiceItems, input.items, errors);
    const rates = await this.ratesOf(trx, actor, invoice, lines);
    const { items: priced, taxes } = priceInvoice(
      lines.map((line) => line.input),
      { currency: invoice.currency, default_tax_rate_ids: [], tax_exempt: invoice.tax_exempt },
      rates,
      errors,
    );
    if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

    const uncredited = invoice.total - invoice.amount_credited;
    let { total, rounding_amount: rounding } = taxes;
    // Crediting the rest of every line credits the rest of the invoice: per-rate rounding (or the
    // invoice's own rounding) may differ by a few minor units, which the note's rounding takes.
    if (completesInvoice && Math.abs(uncredited - total) <= invoiceItems.length + Math.abs(invoice.rounding_amount)) {
      rounding += uncredited - total;
      total = uncredited;
    }
    const money = (minor: number) => `${toMajor(minor, invoice.currency)} ${invoice.currency}`;
    if (total <= 0) throw new ValidationFailed({ items: [`the credit note must total more than zero (its lines total ${money(total)})`] });
    if (total > uncredited) {
      throw new ValidationFailed({ items: [`the credit note totals ${money(total)}, more than the ${money(uncredited)} of the invoice's total its credit notes have left`] });
    }

    const applied = Math.min(total, amountDue(invoice));
    const rest = total - applied;
    const number = await drawCreditNoteNumber(trx, actor);
    const note = await CreditNote.create(actor, trx, {
      number,
      invoice_id: invoice.id,
      client_id: invoice.client_id,
      currency: invoice.currency,
      reason: (input.reason ?? null),
      memo: input.memo || null,
      subtotal: taxes.subtotal,
      total_excluding_tax: taxes.total_excluding_tax,
      total_tax: taxes.total_tax,
      rounding_amount: rounding,
      total,
      amount_applied: applied,
      amount_refunded: input.refund ? rest : 0,
      out_of_band_amount: input.refund ? 0 : rest,
      tax_exempt: invoice.tax_exempt,
      tax_breakdown: taxes.tax_breakdown,
      // Issued invoices always have their snapshot.
      seller: invoice.seller!,
      buyer: invoice.buyer!,
      metadata: initialMetadata(input.metadata),
    });
    const items = await CreditNoteItem.insertFor(note, trx, storedLines(priced, lines));
    const booked = await bookMoney(trx, invoice, { amount_credited: invoice.amount_credited + total, credit_note_ids: [...(invoice.credit_note_ids ?? []), note.id] });
    const { refunds, reserved } = input.refund && rest > 0 ? await this.refunds.refundForCreditNote(trx, actor, invoice, rest, note) : { refunds: [], reserved: [] };

    const detail = await invoiceDetail(actor, invoice, trx, this.links);
    const view = toCreditNoteView(note, items, refunds.map((refund) => refund.id));
    if (invoice.status === 'paid' && !wasPaid) await this.outbox.record(trx, actor, 'invoice.paid', { invoice: detail });
    await this.outbox.record(trx, actor, 'credit_note.created', { credit_note: view, invoice: detail });
    if (booked.becameVoid) this.invoices.afterVoid(actor, invoice.id);
    return { result: { credit_note: view, invoice: detail }, reserved };
  }

  /**
   * The lines to price: an invoice line's copy (its description, unit price and rates as applied on
   * the invoice, and its tax computed elsewhere when the whole line is credited), or a line of the
   * note's own. `completesInvoice`: only copies, and after them every invoice line is credited in full.
   */
  private async plan(
    trx: Knex.Transaction,
    actor: Actor,
    invoice: Invoice,
    invoiceItems: InvoiceItem[],
    given: CreditNoteLineInput[],
    errors: Map<string, string[]>,
  ): Promise<{ lines: PlannedLine[]; completesInvoice: boolean }> {
    const byId = new Map(invoiceItems.map((item) => [item.id, item]));
    const credited = await this.creditedUnits(trx, actor, invoice);
    const lines = given.map((line, index): PlannedLine => {
      if (!isCopiedLine(line)) return { input: { description: line.description, quantity: line.quantity, unit_price: line.unit_price, tax_rate_ids: line.tax_rate_ids ?? [] }, invoiceItemId: null };
      const field = `items.${index}`;
      const item = byId.get(line.invoice_item_id);
      if (!item) {
        errors.set(`${field}.invoice_item_id`, ['does not name a line of this invoice']);
        return { input: { description: '-', quantity: 1, unit_price: 0 }, invoiceItemId: null };
      }
      const left = item.quantity_units - (credited.get(item.id) ?? 0);
      const units = line.quantity === undefined ? left : quantityUnitsOf(line.quantity, `${field}.quantity`, errors);
      if (left <= 0) errors.set(`${field}.invoice_item_id`, ['this line has been credited in full already']);
      else if (units > left) errors.set(`${field}.quantity`, [`must not exceed what earlier credit notes left of the line (${fromQuantityUnits(left)})`]);
      credited.set(item.id, (credited.get(item.id) ?? 0) + units);
      const whole = units === item.quantity_units;
      return {
        input: {
          description: item.description,
          // A line refused above is priced as one unit, so that the other lines' errors are found too.
          quantity: fromQuantityUnits(units > 0 ? units : 1),
          unit_price: toMajor(item.unit_price, invoice.currency),
          tax_rate_ids: item.tax_rate_ids ?? invoice.default_tax_rate_ids ?? [],
          ...(whole && item.tax_amounts ? { tax_amounts: item.tax_amounts.map(({ tax_rate_id, amount }) => ({ tax_rate_id, amount: toMajor(amount, invoice.currency) })) } : {}),
        },
        invoiceItemId: item.id,
      };
    });
    keepTaxAmountsWhereWhole(lines);
    const completesInvoice = given.every(isCopiedLine) && invoiceItems.every((item) => (credited.get(item.id) ?? 0) >= item.quantity_units);
    return { lines, completesInvoice };
  }

  /**
   * The terms of every rate the lines use, named as the invoice named them at issue. Copied lines
   * keep their rates even if archived since; the note's own lines need active ones.
   */
  private async ratesOf(trx: Knex.Transaction, actor: Actor, invoice: Invoice, lines: PlannedLine[]): Promise<Map<number, TaxRateTerms>> {
    const own = lines.map((line) => (line.invoiceItemId === null ? line.input : { tax_rate_ids: [] }));
    const { ids: ownIds, fieldsOf } = rateIdsOf(own, []);
    await this.taxRates.termsFor(actor, trx, ownIds, { forNewLines: true, fieldsOf });
    const rates = await this.taxRates.termsFor(actor, trx, rateIdsOf(lines.map((line) => line.input), []).ids, { forNewLines: false });
    for (const line of invoice.tax_breakdown ?? []) {
      const rate = rates.get(line.tax_rate_id);
      if (rate) rates.set(rate.id, { ...rate, display_name: line.display_name });
    }
    return rates;
  }

  /** How much of each invoice line (quantity units) its earlier credit notes credited. */
  private async creditedUnits(trx: Knex, actor: Actor, invoice: Invoice): Promise<Map<number, number>> {
    const notes = await CreditNote.of(actor, trx).where('credit_notes.invoice_id', invoice.id);
    const credited = new Map<number, number>();
    if (!notes.length) return credited;
    for (const item of await CreditNoteItem.ofCreditNotes(notes, trx).whereNotNull('invoice_item_id')) {
      credited.set(item.invoice_item_id!, (credited.get(item.invoice_item_id!) ?? 0) + Number(item.quantity_units));
    }
    return credited;
  }

  private async linesLeft(actor: Actor, conn: Knex, invoice: Invoice, items: InvoiceItem[]): Promise<CreditNoteLineInput[]> {
    const credited = await this.creditedUnits(conn, actor, invoice);
    return items.filter((item) => item.quantity_units > (credited.get(item.id) ?? 0)).map((item) => ({ invoice_item_id: item.id }));
  }

  /** Each note with its lines and the refunds it made, read in three queries for any number of notes. */
  private async views(actor: Actor, notes: CreditNote[], conn: Knex): Promise<CreditNoteView[]> {
    if (!notes.length) return [];
    const [items, refunds] = await Promise.all([
      CreditNoteItem.ofCreditNotes(notes, conn).orderBy(['credit_note_id', 'position']),
      Refund.of(actor, conn)
        .whereIn(
          'refunds.credit_note_id',
          notes.map((note) => note.id),
        )
        .orderBy('refunds.id'),
    ]);
    return notes.map((note) =>
      toCreditNoteView(
        note,
        items.filter((item) => item.credit_note_id === note.id),
        refunds.filter((refund) => refund.credit_note_id === note.id).map((refund) => refund.id),
      ),
    );
  }

  private async find(actor: Actor, id: number): Promise<CreditNote> {
    const row = await CreditNote.findOwn(actor, this.db.current, id);
    if (!row) throw new NotFound('Credit note', id);
    return row;
  }

  private async lockInvoice(trx: Knex.Transaction, actor: Actor, id: number): Promise<Invoice> {
    const row = await Invoice.findOwn(actor, trx, id, { lock: 'update' });
    if (!row) throw new NotFound('Invoice', id);
    return row;
  }
}

/** A quantity in units of 1/10 000, or 0 with the field's error recorded (more than 4 decimals). */
function quantityUnitsOf(quantity: number, field: string, errors: Map<string, string[]>): number {
  try {
    return toQuantityUnits(quantity);
  } catch (err) {
    if (!(err instanceof AmountProblem)) throw err;
    errors.set(field, [err.message]);
    return 0;
  }
}

/**
 * The engine takes tax computed elsewhere for a rate only when every line of that rate carries it:
 * a rate with a partly credited line (whose share of the shop's tax is not known) is computed by
 * the rate on every line of the note.
 */
function keepTaxAmountsWhereWhole(lines: PlannedLine[]): void {
  const partial = new Set<number>();
  for (const { input } of lines) {
    const given = new Set((input.tax_amounts ?? []).map((tax) => tax.tax_rate_id));
    for (const id of input.tax_rate_ids ?? []) if (!given.has(id)) partial.add(id);
  }
  for (const { input } of lines) {
    if (!input.tax_amounts) continue;
    const kept = input.tax_amounts.filter((tax) => !partial.has(tax.tax_rate_id));
    if (kept.length) input.tax_amounts = kept;
    else delete input.tax_amounts;
  }
}

/** The rows of the note's lines: the priced figures, with the invoice line each credits. */
function storedLines(priced: PricedItem[], lines: PlannedLine[]) {
  return priced.map((item, index) => ({
    position: item.position,
    invoice_item_id: lines[index].invoiceItemId,
    description: item.description,
    quantity_units: item.quantity_units,
    unit_price: item.unit_price,
    amount: item.amount,
    amount_excluding_tax: item.amount_excluding_tax,
    // JSON columns travel as text in a fixed statement.
    tax_rate_ids: JSON.stringify(item.tax_rate_ids ?? []),
    tax_amounts: item.tax_amounts && JSON.stringify(item.tax_amounts),
  }));
}
