import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTable } from './kubectl-table.js';

describe('parseTable', () => {
  it('reads cells by header offset, with spaces in headers and empty cells', () => {
    const text = [
      'NAME        SHORTNAMES   APIVERSION                   DISPLAY NAME   AGE',
      'teams                    management.platform.dev/v1   Team One       5s',
      'users       u            v1                                          2m10s',
      '',
    ].join('\n');
    const t = parseTable(text);
    assert.deepEqual(t.headers, ['NAME', 'SHORTNAMES', 'APIVERSION', 'DISPLAY NAME', 'AGE']);
    assert.deepEqual(t.rows, [
      {
        NAME: 'teams',
        SHORTNAMES: '',
        APIVERSION: 'management.platform.dev/v1',
        'DISPLAY NAME': 'Team One',
        AGE: '5s',
      },
      { NAME: 'users', SHORTNAMES: 'u', APIVERSION: 'v1', 'DISPLAY NAME': '', AGE: '2m10s' },
    ]);
  });

  it('is empty for no output', () => {
    assert.deepEqual(parseTable(''), { headers: [], rows: [] });
  });
});
