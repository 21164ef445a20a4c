// A CA bundle that can change while the server runs (a rotated client CA or
// front-proxy CA): readers ask for the bundle in force on every use, and the
// generation tells per-connection caches that what they verified against is gone.

import type { X509Certificate } from 'node:crypto';
import { parseCertificateBundle } from './front-proxy-x509.js';

export interface CaBundle {
  readonly roots: readonly X509Certificate[];
  /** Changes whenever the bundle does. */
  readonly generation: number;
}

export interface CaBundleSource {
  /** The bundle in force now, or undefined when there is none (the feature is off). */
  current(): CaBundle | undefined;
}

let generations = 0;

/** A fresh generation number, shared by every kind of settings so none ever repeats. */
export function nextGeneration(): number {
  return ++generations;
}

/** Parses a PEM bundle; throws when it holds no certificate or a bad one. */
export function compileCaBundle(pem: string): CaBundle {
  return { roots: parseCertificateBundle(pem), generation: nextGeneration() };
}
