/**
 * Response shapes written once. A shape is a TypeBox schema: `Static<typeof Shape>` is its TS type,
 * the schema itself (JSON Schema 2020-12) is its OpenAPI component, and `serializerOf` compiles it
 * into the function that writes the response (fast-json-stringify). `component('Client', …)` names a
 * shape: the document lists every named shape under components.schemas and refers to it where
 * another shape nests it (`componentsOf`).
 */
import { Static, TSchema, TUnsafe, Type } from '@sinclair/typebox';
import type fastJsonType from 'fast-json-stringify';
import { isDeepStrictEqual } from 'node:util';

/** Where a named shape keeps its component name: a symbol, so neither JSON nor the serializer sees it. */
const componentName = Symbol('component name');
/** On a `described` use of a named shape: the shape itself. */
const shapeUsed = Symbol('shape used');

type Named = TSchema & { [componentName]?: string; [shapeUsed]?: Named };

/** Names `schema` as the OpenAPI component `name` (the document refers to it by `$ref` wherever it is nested). */
export function component<T extends TSchema>(name: string, schema: T): T {
  (schema as Named)[componentName] = name;
  return schema;
}

/** The same named shape with another description where it is used (the `$ref` then carries it). */
export function described<T extends TSchema>(schema: T, description: string): T {
  if ((schema as Named)[componentName] === undefined) throw new Error('described() is for a named shape; give an unnamed one its description directly');
  return { ...schema, description, [shapeUsed]: schema };
}

/** `T` or null, written as the document writes it: `type: [T, 'null']` with T's constraints. */
export function nullable<T extends TSchema>(schema: T, options: { description?: string } = {}): TUnsafe<Static<T> | null> {
  if ((schema as Named)[componentName] !== undefined) throw new Error('nullable() of a named shape would copy its name; write the union out');
  if (typeof schema.type !== 'string') throw new Error(`nullable() needs a schema with one type, got ${JSON.stringify(schema)}`);
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'], ...options });
}

/** One of a fixed list of strings, as `{ type: 'string', enum }` (TypeBox's unions would be `anyOf` of consts). */
export function stringEnum<const V extends readonly string[]>(values: V, options: { description?: string } = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });
}

/** The component name of a named shape (a route's response must be one). */
export function componentNameOf(schema: TSchema): string {
  const name = (schema as Named)[componentName];
  if (name === undefined) throw new Error(`A response shape must be named with component(): ${JSON.stringify(schema).slice(0, 200)}`);
  return name;
}

/** A JSON Schema node to walk: TypeBox schemas are plain objects (their symbols are skipped). */
type Node = { [keyword: string]: unknown };

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/**
 * Every named shape reachable from `roots`, as OpenAPI components: each written out once, with the
 * named shapes it nests replaced by `$ref: '#/components/schemas/<name>'` (keeping a description
 * given where it is used). Two different shapes under one name are an error.
 */
export function componentsOf(roots: readonly TSchema[]): Record<string, Node> {
  const shapes = new Map<string, Named>();
  const found: Named[] = [];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(collect);
    if (!isNode(value)) return;
    const shape = (value as Named)[shapeUsed] ?? (value as Named);
    const name = shape[componentName];
    if (name !== undefined) {
      const known = shapes.get(name);
      // TypeBox's modifiers (Type.Optional) copy a shape, name included: a copy is the same shape.
      if (known && known !== shape && JSON.stringify(known) !== JSON.stringify(shape)) throw new Error(`Two response shapes are named ${name}`);
      if (known) return;
      shapes.set(name, shape);
      found.push(shape);
    }
    Object.values(shape).forEach(collect);
  };
  roots.forEach(collect);

  const refer = (value: unknown, root: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => refer(item, false));
    if (!isNode(value)) return value;
    const name = (value as Named)[componentName];
    if (name !== undefined && !root) {
      const used = (value as Named)[shapeUsed];
      return { $ref: `#/components/schemas/${name}`, ...(used ? { description: value.description } : {}) };
    }
    return Object.fromEntries(Object.entries(value).map(([keyword, child]) => [keyword, refer(child, false)]));
  };
  return Object.fromEntries(found.map((shape) => [shape[componentName]!, refer(shape, true) as Node]));
}

/** Writes a response of this shape as JSON: only the shape's fields, in the shape's order. */
export type Serializer<T = unknown> = (value: T) => string;

const serializers = new WeakMap<TSchema, Serializer>();

/**
 * Marks a response shape whose values are JSON kept as written when they happened (the event log):
 * it is written back as stored, by JSON.stringify. Compiled, it would refuse (a 500) an event stored
 * before a field was added to a shape it carries, and drop or reorder its fields.
 */
export function writtenAsStored<T extends TSchema>(schema: T): T {
  serializers.set(schema, JSON.stringify);
  return schema;
}

/**
 * Under the tests (jest sets NODE_ENV=test), every answer is also compared with JSON.stringify's: the
 * compiled serializer drops a field its shape does not name, coerces a value of another type (null to
 * 0, 1.5 to 1 for an integer) and throws on a missing required field, so a view that drifts from its
 * shape must fail its tests rather than answer differently.
 */
const compareWithJson = process.env.NODE_ENV === 'test';

/**
 * Writes `value` with the compiled serializer. Should it throw (a view that left a required field
 * undefined), the value is written by JSON.stringify, as before serializers were compiled: the answer
 * of work already committed must not become a 500.
 */
function guarded(compiled: Serializer): Serializer {
  return (value) => {
    let written: string;
    try {
      written = compiled(value);
    } catch (err) {
      if (compareWithJson) throw err;
      return JSON.stringify(value);
    }
    if (compareWithJson && !isDeepStrictEqual(JSON.parse(written), JSON.parse(JSON.stringify(value)))) {
      throw new Error(`The response differs from its shape: ${JSON.stringify(value)} was written as ${written}`);
    }
    return written;
  };
}

/**
 * fast-json-stringify (and the JSON Schema validator it builds on), required with the first
 * serializer compiled: the CLI, which writes no response, loads its services without it (45 ms of
 * a command's start).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first use (see above)
const fastJson = (): typeof fastJsonType => require('fast-json-stringify') as typeof fastJsonType;

/** The compiled serializer of a shape (compiled once per shape, however many routes answer with it). */
export function serializerOf<T extends TSchema>(schema: T): Serializer<Static<T>> {
  let serialize = serializers.get(schema);
  if (!serialize) {
    serialize = guarded(fastJson()(schema) as Serializer);
    serializers.set(schema, serialize);
  }
  return serialize;
}
