/**
 * Reading what the kernel sends: the generated validator behind
 * parseKernelMessage, and the tool-input helpers.
 */
import { ChatStore } from '../src/store';
import {
  KernelMessage,
  KernelReader,
  PROTOCOL_MAJOR,
  PROTOCOL_MINOR,
  PROTOCOL_VERSION,
  inputCode,
  inputFields,
  THIS_PAGE,
  isReply,
  kernelReads,
  parseKernelMessage,
  partialCode
} from '../src/protocol';

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

describe('version skew', () => {
  /** A welcome as a 1.0 kernel sends it: no `protocol`, no `reply_to`, no `commands`. */
  const welcome10 = {
    ...envelope,
    type: 'welcome',
    session: null,
    history: [],
    more_before: null,
    busy: false,
    state: { type: 'status', state: 'idle', detail: '' },
    queue: [],
    subshells: true,
    tasks: [],
    options: null,
    approval: null,
    trust: null,
    has_key: true
  };

  it('says this page speaks 1.4: the major and the minor the hello sends', () => {
    expect(PROTOCOL_VERSION).toBe('1.4');
    expect([PROTOCOL_MAJOR, PROTOCOL_MINOR]).toEqual([1, 4]);
  });

  it('reads a welcome from a kernel a minor version older, and one newer', () => {
    expect(parseKernelMessage(welcome10)).toBe(welcome10);
    const welcome13 = { ...welcome10, reply_to: '', protocol: '1.3', commands: [], halo: 1 };
    expect(parseKernelMessage(welcome13)).toBe(welcome13);
  });

  it('turns a message it cannot read into a notice naming both versions', () => {
    const reader = new KernelReader();
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const broken = { ...envelope, type: 'text', delta: 5 };
    const before = reader.read(broken);
    expect(before).toEqual({ notice: expect.stringContaining('protocol unknown') });
    expect(reader.read(welcome10)).toEqual({ message: welcome10 });
    expect(reader.kernelVersion).toBe('1.0');
    const after = reader.read({ ...broken, delta: 6 });
    expect('notice' in after && after.notice).toMatch(
      /^This page \(Loom protocol 1\.4\) could not read a message from the kernel \(Loom protocol 1\.0\): "text": \/delta must be string/
    );
    expect(reader.read({ ...broken, delta: 7 })).toEqual({ notice: null }); // told once
    const store = new ChatStore();
    store.notice('warning', (after as { notice: string }).notice); // as the chat shows it
    expect(store.entries).toEqual([
      expect.objectContaining({
        kind: 'notice',
        level: 'warning',
        message: expect.stringMatching(/1\.4.*1\.0/)
      })
    ]);
    expect(warn).toHaveBeenCalledTimes(3); // and each one in the console
    warn.mockRestore();
  });

  it('reads the kernel version from a welcome it cannot read too', () => {
    const reader = new KernelReader();
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const read = reader.read({ ...welcome10, protocol: '1.5', busy: 'no' });
    expect('notice' in read && read.notice).toMatch(/protocol 1\.4.*protocol 1\.5.*\/busy/);
    reader.reset();
    expect(reader.kernelVersion).toBeNull();
    jest.restoreAllMocks();
  });

  it('tells replies from broadcasts by the envelope, or by type from a 1.0 kernel', () => {
    const notice = { ...envelope, type: 'notice', level: 'info', message: 'hi' } as KernelMessage;
    expect(isReply({ ...notice, reply_to: null })).toBe(false); // a broadcast notice
    expect(isReply({ ...notice, reply_to: '' })).toBe(true);
    expect(isReply({ ...notice, reply_to: 'r1' })).toBe(true);
    expect(isReply(notice)).toBe(true); // 1.0: a notice was taken for a reply
    const text = { ...envelope, type: 'text', delta: 'x' } as KernelMessage;
    expect(isReply(text)).toBe(false);
    expect(isReply({ ...text, reply_to: '' })).toBe(true);
  });
});

describe('skew both ways (issue 41.5)', () => {
  const weather = { ...envelope, reply_to: null, type: 'weather', sky: 'blue' };
  const welcomeOf = (version: string) => ({
    ...envelope,
    reply_to: '',
    type: 'welcome',
    session: null,
    history: [],
    more_before: null,
    busy: false,
    state: { type: 'status', state: 'idle', detail: '' },
    queue: [],
    subshells: true,
    tasks: [],
    options: null,
    approval: null,
    trust: null,
    has_key: true,
    protocol: version
  });

  afterEach(() => jest.restoreAllMocks());

  it('skips a type it does not know from a newer minor of its major, logged once', () => {
    const info = jest.spyOn(console, 'info').mockImplementation(() => undefined);
    const reader = new KernelReader();
    expect(reader.read(welcomeOf('1.5'))).toEqual({ message: expect.anything() });
    expect(reader.read(weather)).toEqual({ skipped: 'weather', reply_to: null });
    expect(reader.read({ ...weather, reply_to: 'r1' })).toEqual({
      skipped: 'weather',
      reply_to: 'r1'
    });
    expect(info).toHaveBeenCalledTimes(1);
  });

  it('tells of a type it does not know from a kernel no newer, or of another major', () => {
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    for (const version of [PROTOCOL_VERSION, '1.0', '2.0', '0.9']) {
      const reader = new KernelReader();
      reader.read(welcomeOf(version));
      expect(reader.read(weather)).toEqual({ notice: expect.stringContaining('"weather"') });
    }
  });

  it('knows every kernel message type of its own version', () => {
    expect(THIS_PAGE.known.has('ping')).toBe(true);
    expect(THIS_PAGE.known.has('weather')).toBe(false);
  });

  it('sends a front message type only to a kernel whose version has it', () => {
    expect(kernelReads('focus', '1.2')).toBe(false);
    expect(kernelReads('focus', '1.3')).toBe(true);
    expect(kernelReads('focus', null)).toBe(false); // no welcome yet: taken for 1.0
    expect(kernelReads('sessions', null)).toBe(true);
    expect(kernelReads('sessions', '2.0')).toBe(false); // another major reads none of ours
    // a request a later minor version adds goes to kernels of that version on
    expect(kernelReads('examples', '1.4', { examples: '1.5' })).toBe(false);
    expect(kernelReads('examples', '1.5', { examples: '1.5' })).toBe(true);
  });
});
