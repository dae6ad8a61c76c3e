// A validator for the part of JSON Schema (draft 7) that speedscope's
// file-format-schema.json and our json-report.schema.json use: $ref into
// "#/definitions/...", type, properties, required, items, anyOf, enum, const,
// pattern, minimum, additionalProperties (false only), and the annotations
// title and $schema.
// Any other keyword throws, so a schema that starts using one is noticed
// instead of passing unchecked. Returns the list of errors, each with the
// JSON path where it was found; empty when the value is valid.

const annotations = new Set(['$schema', 'title', 'description', 'definitions']);

function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (Number.isInteger(v)) return 'integer';
  return typeof v;
}

function typeMatches(want, v) {
  const got = typeOf(v);
  if (want === 'number') return got === 'number' || got === 'integer';
  return got === want;
}

export function validate(schema, value) {
  const errors = [];
  const resolve = (ref) => {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
    let node = schema;
    for (const part of ref.slice(2).split('/')) {
      node = node[part];
      if (node === undefined) throw new Error(`dangling $ref ${ref}`);
    }
    return node;
  };
  const check = (s, v, at) => {
    let ok = true;
    const fail = (msg) => {
      errors.push(`${at}: ${msg}`);
      ok = false;
    };
    for (const key of Object.keys(s)) {
      if (annotations.has(key)) continue;
      const rule = s[key];
      switch (key) {
        case '$ref':
          if (!check(resolve(rule), v, at)) ok = false;
          break;
        case 'type': {
          const types = Array.isArray(rule) ? rule : [rule];
          if (!types.some((t) => typeMatches(t, v))) fail(`${typeOf(v)}, not ${types.join('|')}`);
          break;
        }
        case 'const':
          if (JSON.stringify(v) !== JSON.stringify(rule)) fail(`${JSON.stringify(v)} != const`);
          break;
        case 'enum':
          if (!rule.some((e) => JSON.stringify(e) === JSON.stringify(v)))
            fail(`${JSON.stringify(v)} not in ${JSON.stringify(rule)}`);
          break;
        case 'pattern':
          if (typeof v === 'string' && !new RegExp(rule, 'u').test(v))
            fail(`${JSON.stringify(v)} !~ ${rule}`);
          break;
        case 'minimum':
          if (typeof v === 'number' && v < rule) fail(`${v} < ${rule}`);
          break;
        case 'required':
          if (typeOf(v) === 'object')
            for (const name of rule) if (!(name in v)) fail(`missing "${name}"`);
          break;
        case 'properties':
          if (typeOf(v) === 'object')
            for (const [name, sub] of Object.entries(rule))
              if (name in v && !check(sub, v[name], `${at}.${name}`)) ok = false;
          break;
        case 'additionalProperties':
          if (rule !== false) throw new Error('only additionalProperties: false is supported');
          if (typeOf(v) === 'object')
            for (const name of Object.keys(v))
              if (!(s.properties && name in s.properties)) fail(`unexpected "${name}"`);
          break;
        case 'items':
          if (typeOf(v) === 'array')
            v.forEach((item, i) => {
              if (!check(rule, item, `${at}[${i}]`)) ok = false;
            });
          break;
        case 'anyOf': {
          // Errors of the branches are kept only when none matches.
          const before = errors.length;
          const matched = rule.some((sub) => {
            const mark = errors.length;
            if (check(sub, v, at)) return true;
            errors.length = mark;
            return false;
          });
          errors.length = before;
          if (!matched) fail('matches none of anyOf');
          break;
        }
        default:
          throw new Error(`unsupported JSON Schema keyword "${key}" at ${at}`);
      }
    }
    return ok;
  };
  check(schema, value, '$');
  return errors;
}
