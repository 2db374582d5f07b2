/**
 * The chat's requests to the kernel (the generated `REQUEST_REPLIES`: a session list, a
 * search, older messages, a slash command, completions, a variable's origin, examples).
 * Each goes with its own `request_id` through `LoomConnection.invoke`, and a request that
 * gets no answer is never silent: the person reads why in the chat (the kernel did not answer
 * in time, is too old for it, or answered in a way this page does not know).
 */
import { RequestError } from './connection';
import { ReplyTo, Request, RequestType } from './protocol';

/** What the chat needs of its connection. */
export type Invoker = {
  readonly canSend: boolean;
  invoke<M extends Request>(message: M): Promise<ReplyTo<M['type']>>;
};

/** What each request asks for, in the words of a notice (the compiler wants every type). */
const ASKED: { [T in RequestType]: (message: Extract<Request, { type: T }>) => string } = {
  load_more: () => 'older messages',
  sessions: () => "this notebook's conversations",
  search: message => `the search for "${message.query}"`,
  complete: message => `the completions of @${message.query}`,
  command: message => `/${`${message.name} ${message.args}`.trim()}`,
  where_from: message => `where ${message.name} came from`,
  examples: () => 'example prompts'
};

/** Requests whose late reply still shows in the chat (the store applies it when it comes). */
const SHOWN_LATE = new Set<RequestType>(['load_more', 'sessions', 'search', 'command']);

/** What a request asked for, in words. */
export function askedFor(request: Request): string {
  const words = ASKED[request.type] as (message: Request) => string;
  return words(request);
}

/** The chat's words for a request that got no answer (null: nothing to say). */
export function failureText(error: RequestError): string | null {
  const what = askedFor(error.request);
  const kernel = `protocol ${error.kernelVersion ?? '1.0'}`;
  switch (error.reason) {
    case 'offline':
      return null; // the caller knew: no kernel listens (the state line says so)
    case 'timeout': {
      const seconds = Math.round(error.timeoutMs / 1000);
      const after = SHOWN_LATE.has(error.request.type)
        ? 'Its answer shows here when it comes.'
        : 'Try again in a moment.';
      return (
        `The kernel has not answered ${what} within ${seconds} s: it may be busy (a long ` +
        `cell, or the work itself takes long). ${after}`
      );
    }
    case 'older-kernel':
      return (
        `This kernel's Loom (${kernel}) is too old to answer ${what}: install the same ` +
        'loom_jupyter for the kernel as for JupyterLab, then restart the kernel.'
      );
    case 'unknown-reply':
      return (
        `The kernel's Loom (${kernel}) answered ${what} with a message this page does not ` +
        'know: install the same loom_jupyter for JupyterLab as for the kernel, then reload ' +
        'the page.'
      );
  }
}

export class Requests {
  /** `notice`: how the chat tells the person (a warning in the conversation). */
  constructor(connection: Invoker, notice: (text: string) => void) {
    this._connection = connection;
    this._notice = notice;
  }

  /**
   * Send a request; its reply (or the error notice in its place) goes to `use`. False when
   * no kernel listens. A request that fails says why in the chat; a timeout says so once per
   * request type until one of that type is answered again.
   */
  ask<M extends Request>(message: M, use: (reply: ReplyTo<M['type']>) => void): boolean {
    if (!this._connection.canSend) {
      return false;
    }
    this._connection.invoke(message).then(
      reply => {
        this._late.delete(message.type);
        use(reply);
      },
      (error: unknown) => this._failed(error)
    );
    return true;
  }

  private _failed(error: unknown): void {
    if (!(error instanceof RequestError)) {
      console.error('loom: a request failed', error);
      return;
    }
    console.debug(error.message);
    const text = failureText(error);
    if (text === null) {
      return;
    }
    if (error.reason === 'timeout') {
      if (this._late.has(error.request.type)) {
        return; // told already: the kernel still has not answered one of these
      }
      this._late.add(error.request.type);
    }
    this._notice(text);
  }

  private readonly _connection: Invoker;
  private readonly _notice: (text: string) => void;
  /** Request types whose last timeout was told and that have not been answered since. */
  private readonly _late = new Set<RequestType>();
}
