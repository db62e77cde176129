/** Invoice statuses, apart from the model so that code without a database (a PDF thread) can use them. */
export const INVOICE_STATUSES = ['draft', 'sent', 'viewed', 'partial', 'paid', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** The statuses that take a payment; a draft, paid or void invoice takes none. */
export const PAYABLE_STATUSES: readonly InvoiceStatus[] = ['sent', 'viewed', 'partial'];
