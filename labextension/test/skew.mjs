/**
 * The page side of the version-skew test (tests/jupyter/test_protocol_skew.py), run in node
 * on this page's protocol module compiled to CommonJS: a page built from this code and
 * another version's frozen schema (its version, the kernel message types it knows, and its
 * validator, made by ajv as the build makes this page's) reads what a kernel sends; and this
 * page's rule says which front message types go to a kernel of a given version.
 *
 * Usage: node test/skew.mjs transpile DIR   (DIR/protocol.ts and DIR/generated/*.ts to
 *          DIR/cjs/, CommonJS: each file on its own, as ts-jest does, no type check)
 *        node test/skew.mjs DIR/cjs/protocol.js CASES_JSON
 * CASES_JSON: [{"page": {"version": "1.0", "schema": PATH} or null (this page),
 *               "messages": [{...}, ...], "kernel": "1.2", "front_types": [...],
 *               "front_since": {type: version} or null (this page's table)}, ...]
 * prints, for each case, {"readings": [...], "logged": [[level, text], ...],
 * "sends": {type: bool}}
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

import { checker } from '../scripts/checking.mjs';

/** Every .ts file under `dir` (but `cjs/`) as CommonJS under `dir/cjs/`. */
async function transpile(dir) {
  const { default: ts } = await import('typescript');
  const files = [join(dir, 'protocol.ts')].concat(
    readdirSync(join(dir, 'generated'))
      .filter(name => name.endsWith('.ts'))
      .map(name => join(dir, 'generated', name))
  );
  const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 };
  for (const file of files) {
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions });
    const out = join(dir, 'cjs', relative(dir, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
}

if (process.argv[2] === 'transpile') {
  await transpile(resolve(process.argv[3]));
  process.exit(0);
}

const [protocolPath, casePath] = process.argv.slice(2);
const protocol = createRequire(import.meta.url)(resolve(protocolPath));
const cases = JSON.parse(readFileSync(casePath, 'utf8'));

let logged = [];
console.info = (...args) => logged.push(['info', args.join(' ')]);
console.warn = (...args) => logged.push(['warn', args.join(' ')]);

/** The kernel message types a schema's page knows. */
function known(schema) {
  const defs = schema.$defs;
  return defs.Outbound.oneOf.map(ref => defs[ref.$ref.split('/').pop()].properties.type.const);
}

/** The page a case names: another version's, or this one. */
function pageOf(spec) {
  if (spec === null) {
    return protocol.THIS_PAGE;
  }
  const schema = JSON.parse(readFileSync(spec.schema, 'utf8'));
  const validate = checker(schema).getSchema('loom#/$defs/KernelMessage');
  return {
    version: spec.version,
    known: new Set(known(schema)),
    parse: data => {
      if (validate(data)) {
        return data;
      }
      const [error] = validate.errors;
      return `${JSON.stringify(data?.type)}: ${error.instancePath || '/'} ${error.message}`;
    }
  };
}

/** One case: a fresh reader of the case's page reads its messages, in order. */
function run(input) {
  logged = [];
  const reader = new protocol.KernelReader(pageOf(input.page));
  const readings = input.messages.map(data => {
    const read = reader.read(data);
    return 'message' in read ? { message: read.message.type } : read;
  });
  const since = input.front_since ?? undefined;
  const sends = Object.fromEntries(
    input.front_types.map(type => [type, protocol.kernelReads(type, input.kernel, since)])
  );
  return { readings, logged, sends };
}

process.stdout.write(JSON.stringify(cases.map(run)));
