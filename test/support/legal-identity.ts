/** A seller and a buyer with a legal identity, as the pages and documents that name both parties are tested with. */
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { TestApp } from './app';

/** A German seller with its address, VAT ID and contact. */
export const GERMAN_SELLER = {
  legal_name: 'Muster Design GmbH',
  address_line1: 'Hauptstraße 1',
  city: 'Berlin',
  postal_code: '10115',
  country: 'DE',
  tax_id: 'DE123456789',
  email: 'billing@muster.example',
  phone: '+49 30 1234567',
};

/** A French buyer (a client's fields). */
export const FRENCH_BUYER = { name: 'Camille Martin', company: 'Atelier Martin SARL', address: '12 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' };

/** Gives business `businessId` the German seller's legal identity. */
export async function asGermanSeller(app: TestApp, businessId: number): Promise<void> {
  await app.server.services.businesses.update(businessId, validateInput(businessChangesSchema, GERMAN_SELLER));
}
