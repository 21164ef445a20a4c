// List and watch options: their validation (k8s.io/apimachinery
// apis/meta/internalversion/validation) and the selection predicate built from
// the label and field selectors (registry/generic/matcher.go).

import { newBadRequest, newInvalid, type ApiError } from '../../apis/meta/errors.js';
import { forbidden, notSupported, type FieldError } from '../../apis/meta/field-errors.js';
import {
  EVERYTHING_FIELDS,
  objectMetaFieldsSet,
  parseFieldSelector,
  type FieldSelector,
} from '../../apis/meta/fields.js';
import { EVERYTHING_LABELS, parseLabelSelector, type LabelSelector } from '../../apis/meta/labels.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { Predicate, ResourceVersionMatch } from '../../storage/interfaces.js';
import type { ListOptions } from '../rest/interfaces.js';

const LIST_OPTIONS_KIND = { group: 'meta.k8s.io', kind: 'ListOptions' };

function listOptionErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch ?? '';
  if (match) {
    if (!o.resourceVersion) {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    }
    if (o.continue) {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    }
    if (match === 'Exact' && o.resourceVersion === '0') {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
    }
  }
  if (o.sendInitialEvents !== undefined) {
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  return errs;
}

function watchOptionErrors(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch ?? '';
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(
      forbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  }
  if (match) {
    if (o.sendInitialEvents === undefined) {
      errs.push(
        forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
    if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (o.continue) {
      errs.push(
        forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    }
  }
  return errs;
}

/** 422 on ListOptions.meta.k8s.io when the combination is not allowed. */
export function validateListOptions(options: ListOptions, watch: boolean): void {
  const errs = watch ? watchOptionErrors(options) : listOptionErrors(options);
  if (errs.length > 0) throw newInvalid(LIST_OPTIONS_KIND, '', errs);
  if (!watch && options.continue && options.resourceVersion && options.resourceVersion !== '0') {
    throw newBadRequest('specifying resource version is not allowed when using continue');
  }
}

export function resourceVersionMatchOf(options: ListOptions): ResourceVersionMatch {
  const m = options.resourceVersionMatch ?? '';
  return m === 'Exact' || m === 'NotOlderThan' ? m : '';
}

/** A predicate that also knows its selectors, to narrow what storage must read. */
export interface SelectionPredicate extends Predicate {
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
}

/** Parses the selectors of a list or watch; a 400 with the parser's message when one is malformed. */
export function selectionPredicate(
  options: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>,
): SelectionPredicate {
  // Most lists and watches select nothing: share one predicate rather than keep two
  // parsed selectors and their closures alive with every open watch.
  if (!options.labelSelector && !options.fieldSelector) return SELECT_EVERYTHING;
  const labels = parseLabelSelector(options.labelSelector ?? '');
  if (!labels.ok) throw selectorError(labels.error);
  const fields = parseFieldSelector(options.fieldSelector ?? '');
  if (!fields.ok) throw newBadRequest(fields.error);
  return predicateFrom(labels.value, fields.value);
}

const SELECT_EVERYTHING: SelectionPredicate = Object.freeze(
  predicateFrom(EVERYTHING_LABELS, EVERYTHING_FIELDS),
);

function selectorError(message: string): ApiError {
  return newBadRequest(`unable to parse labelSelector: ${message}`);
}

export function predicateFrom(labels: LabelSelector, fields: FieldSelector): SelectionPredicate {
  return {
    labels,
    fields,
    empty: labels.empty && fields.empty,
    matches: (obj: KubeObject) =>
      labels.matches(obj.metadata.labels) && fields.matches(objectMetaFieldsSet(obj)),
  };
}
