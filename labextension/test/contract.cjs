/**
 * The TypeScript side of the protocol's contract test
 * (tests/jupyter/test_protocol_contract.py): checks messages with the
 * compiled generated validators.
 *
 * Usage: node test/contract.cjs VALIDATORS_JS SAMPLES_JSON
 * SAMPLES_JSON holds [{"direction": "kernel" | "front", "message": {...}}, ...];
 * prints a JSON list: null for a valid message, else the first error.
 */
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');

const [validatorsPath, samplesPath] = process.argv.slice(2);
const validators = require(resolve(validatorsPath));
const samples = JSON.parse(readFileSync(samplesPath, 'utf8'));

const verdicts = samples.map(({ direction, message }) => {
  const validate =
    direction === 'kernel' ? validators.validateKernelMessage : validators.validateFrontMessage;
  if (validate(message)) {
    return null;
  }
  const [error] = validate.errors;
  return `${error.instancePath || '/'} ${error.message}`;
});
process.stdout.write(JSON.stringify(verdicts));
