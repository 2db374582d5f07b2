/**
 * How the protocol's validators check a message: the schema's rules without its prose, in an
 * ajv with these options. generate-protocol.mjs makes the page's validators with it, and the
 * skew test (test/skew.mjs) an older page's, from that version's frozen schema.
 */
import Ajv from 'ajv';

/** The schema without its prose (the validators keep a copy of what they check). */
export function rulesOnly(node) {
  if (Array.isArray(node)) {
    return node.map(rulesOnly);
  }
  if (node === null || typeof node !== 'object') {
    return node;
  }
  const prose = new Set(['title', 'description', '$comment']);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !prose.has(key) || typeof value !== 'string')
      .map(([key, value]) => [key, rulesOnly(value)])
  );
}

/** How the validators check. */
export const CHECKING = {
  discriminator: true,
  allErrors: false,
  strict: true,
  allowUnionTypes: true,
  inlineRefs: false
};

/** An ajv holding `schema`'s rules as `loom` (`options`: ajv's, beside `CHECKING`). */
export function checker(schema, options = {}) {
  const ajv = new Ajv({ ...options, ...CHECKING });
  ajv.addSchema({ ...rulesOnly(schema), $id: 'loom' });
  return ajv;
}

