// generateName (k8s.io/apiserver pkg/storage/names/generate.go): the base,
// truncated so the result fits a 63-character label, plus five random
// characters from an alphabet without vowels (no accidental words) and without
// look-alikes (0/o, 1/l).

import { randomInt } from 'node:crypto';

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const RANDOM_LENGTH = 5;
export const MAX_GENERATED_BASE_LENGTH = 63 - RANDOM_LENGTH;
/** How many names the store tries before it gives up with a 409 (store.go maxNameGenerationCreateAttempts). */
export const MAX_NAME_GENERATION_ATTEMPTS = 8;

export function randomSuffix(length = RANDOM_LENGTH): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET.charAt(randomInt(ALPHABET.length));
  return out;
}

export function generateName(base: string, random: () => string = randomSuffix): string {
  return `${base.slice(0, MAX_GENERATED_BASE_LENGTH)}${random()}`;
}
