// Asking for a secret on a terminal without showing it: the terminal is put in raw
// mode (no echo, no line editing by the terminal), the typed characters are
// collected until Enter, Backspace removes one, Ctrl-C cancels and Ctrl-D ends the
// input. Nothing of what is typed is written anywhere; the terminal's mode is put
// back whatever happens.

export interface SecretInput {
  setRawMode(mode: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface PromptOutput {
  write(chunk: string): unknown;
}

export class PromptCancelled extends Error {
  override readonly name = 'PromptCancelled';
}

export function readSecretFromTerminal(
  input: SecretInput,
  output: PromptOutput,
  prompt: string,
): Promise<string> {
  output.write(prompt);
  input.setRawMode(true);
  input.resume();
  return new Promise<string>((resolve, reject) => {
    let typed = '';
    const finish = (err?: Error): void => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
        switch (ch) {
          case '\r':
          case '\n':
          case '\u0004': // Ctrl-D
            finish();
            return;
          case '\u0003': // Ctrl-C
            finish(new PromptCancelled('cancelled'));
            return;
          case '\u007f': // Backspace
          case '\b':
            typed = [...typed].slice(0, -1).join('');
            break;
          default:
            if (ch >= ' ') typed += ch;
        }
      }
    };
    input.on('data', onData);
  });
}
