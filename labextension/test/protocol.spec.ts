/**
 * Reading what the kernel sends: the generated validator behind
 * parseKernelMessage, and the tool-input helpers.
 */
import { inputCode, inputFields, parseKernelMessage, partialCode } from '../src/protocol';

const envelope = { seq: 3, kernel_session: 'k1', turn: 1 };
const started = {
  ...envelope,
  type: 'tool_started',
  call_id: 'c1',
  name: 'run_python',
  summary: 'run 1 line',
  input: { code: '1 + 1' }
};

function without(message: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...message };
  delete copy[field];
  return copy;
}

describe('parseKernelMessage', () => {
  it('returns a message that follows the schema as it came', () => {
    const text = { ...envelope, type: 'text', delta: 'Hel' };
    expect(parseKernelMessage(text)).toBe(text);
    expect(parseKernelMessage(started)).toBe(started);
  });

  it('names a field the kernel always sends when it is missing', () => {
    expect(parseKernelMessage(without(started, 'summary'))).toMatch(/"tool_started".*summary/);
  });

  it('refuses a field of the wrong kind, an unknown type and a missing envelope', () => {
    expect(parseKernelMessage({ ...started, turn: '1' })).toMatch(/\/turn must be integer/);
    expect(parseKernelMessage({ ...envelope, type: 'dance' })).toMatch(/"dance"/);
    expect(parseKernelMessage(without(started, 'seq'))).toMatch(/seq/);
    expect(parseKernelMessage('text')).toMatch(/must be object/);
  });

  it('refuses a value outside an enumeration', () => {
    const status = { ...envelope, type: 'status', state: 'dreaming', detail: '' };
    expect(parseKernelMessage(status)).toMatch(/\/state must be equal to one of the allowed/);
  });

  it('tolerates a field it does not know (a newer kernel may add one)', () => {
    const text = { ...envelope, type: 'text', delta: 'x', colour: 'blue' };
    expect(parseKernelMessage(text)).toBe(text);
  });
});

describe('tool input helpers', () => {
  it('reads the code of a finished input', () => {
    expect(inputCode({ code: 'print(1)' })).toBe('print(1)');
    expect(inputCode({ path: 'a.csv' })).toBeNull();
    expect(inputCode(['code'])).toBeNull();
    expect(inputCode({ cell_id: 'c1', source: 'x = 1' })).toBe('x = 1');
    expect(inputFields({ cell_id: 'c1', source: 'x = 1', run: true })).toBe(
      'cell_id: c1 · run: true'
    );
    expect(inputFields({ code: 'print(1)' })).toBe('');
    expect(inputFields({ path: 'a.csv' })).toBe('');
  });

  it('decodes the code of an input still streaming, as far as it has come', () => {
    expect(partialCode('{"code": "print(\\"hi')).toBe('print("hi');
    expect(partialCode('{"code": "a\\nb\\u00')).toBe('a\nb');
    expect(partialCode('{"path": "a.csv"')).toBeNull();
    expect(partialCode('{"cell_id": "c1", "source": "a = 1\\nb')).toBe('a = 1\nb');
  });
});
