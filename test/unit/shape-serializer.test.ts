/**
 * A response shape's compiled serializer writes only what the shape says. Under the tests it also
 * compares each answer with JSON.stringify's, so a view that drifts from its shape fails loudly.
 */
import { Type } from '@sinclair/typebox';
import { component, serializerOf } from '../../server/shapes/component';

const Sample = component('SerializerSample', Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false }));

describe('a shape serializer', () => {
  test('when the value matches its shape, then it is written as JSON.stringify writes it, in the shape\'s order', () => {
    const serialize = serializerOf(Sample);

    expect(serialize({ name: 'Ada', id: 7 })).toBe('{"id":7,"name":"Ada"}');
  });

  test.each([
    ['a field the shape does not name', { id: 7, name: 'Ada', secret: 'x' }],
    ['a value of another type', { id: 1.5, name: 'Ada' }],
    ['a missing required field', { id: 7 }],
  ])('when a view gives %s, then the tests\' serializer refuses it', (_case, value) => {
    const serialize = serializerOf(Sample) as (value: unknown) => string;

    expect(() => serialize(value)).toThrow();
  });
});
