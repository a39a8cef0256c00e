// zod schemas as the JSON Schemas Fastify takes for a route: the same dialect as the OpenAPI 3.1
// document (JSON Schema 2020-12), without the `$schema` keyword (it belongs to a document, not
// to a schema embedded in a route) and without bounds every JSON value meets anyway, which only
// clutter the published contract.
import { z } from 'zod';

/** `input` for what a client sends (defaults optional), `output` for what the route answers. */
export function toRouteSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    override: ({ jsonSchema: node }) => {
      // z.int() bounds integers to the safe range; object keys are strings in JSON.
      if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
      if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
      if (node.type === 'object' && JSON.stringify(node.propertyNames) === '{"type":"string"}') {
        delete node.propertyNames;
      }
    },
  });
  return jsonSchema;
}
