// CPU profiles of a window of a child's run, for finding what bounds a figure:
// `start`, run the load, then `stop` writes a .cpuprofile (open it in Chrome DevTools).

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

export type ProfileCommand = { start: true } | { stop: string };

let profiler: Session | undefined;

export async function profile(command: ProfileCommand): Promise<{ file?: string }> {
  const post = (s: Session, method: string): Promise<unknown> =>
    new Promise((resolve, reject) => s.post(method, (err, result) => (err ? reject(err) : resolve(result))));
  if ('start' in command) {
    profiler = new Session();
    profiler.connect();
    await post(profiler, 'Profiler.enable');
    await post(profiler, 'Profiler.start');
    return {};
  }
  if (!profiler) return {};
  const { profile: data } = (await post(profiler, 'Profiler.stop')) as { profile: unknown };
  profiler.disconnect();
  profiler = undefined;
  writeFileSync(command.stop, JSON.stringify(data));
  return { file: command.stop };
}
