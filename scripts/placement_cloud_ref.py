#!/usr/bin/python3
"""Build a cloud in the real OpenStack Placement (Debian python3-placement
8.0.0, in-process, in-memory SQLite) and record its answers to
GET /allocation_candidates, as golden data for package candidates.

Run with the system interpreter, which has the placement package:

    /usr/bin/python3 scripts/placement_cloud_ref.py CLOUD.json [GOLDEN.json]

CLOUD.json (written by the Go tests, see candidates/gabbi_fixtures_test.go, gabbi_cloud_test.go):

    {"name": "...",
     "aggregates": {"aggA": "<uuid>", ...},
     "providers": [{"name": "cn1", "uuid": "...", "parent": "<name>"|"",
                    "aggregates": ["aggA"], "traits": ["..."],
                    "inventories": {"VCPU": {"total": 8, "reserved": 0,
                        "min_unit": 1, "max_unit": 8, "step_size": 1,
                        "allocation_ratio": 1.0}}}, ...],
     "allocations": [{"consumer": "<uuid>", "resources":
                      {"<provider name>": {"VCPU": 2}}}],
     "queries": [{"name": "...", "mv": 29, "groups": [{"suffix": "",
                  "resources": {"VCPU": 1}, "required": [["A"], ["B", "C"]],
                  "forbidden": ["X"], "member_of": [["aggA"]],
                  "forbidden_aggs": ["aggB"], "in_tree": "cn1"}],
                  "group_policy": "isolate", "limit": 2,
                  "root_required": ["T"], "root_forbidden": ["U"],
                  "same_subtree": [["_A", "_B"]]}]}

Aggregate and provider names in queries are replaced by their UUIDs; a value
that is not a known name is passed through (to ask about unknown UUIDs).

Providers are created in list order, so Placement's internal ids follow the
same order as rpctl's. The output is a JSON list of {"name", "mv", "query",
"status", "body"} (to stdout when GOLDEN.json is not given).

The query string is built so that it means exactly the structured request:
traits and aggregates in one parameter before 1.39 / 1.24 (repeats were not
ANDed then), one parameter per any-of set afterwards.
"""

import json
import os
import sys
import uuid as uuidlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import placement_ref  # noqa: E402  (owned by the parser work; reused)


def _req(client, method, path, body=None, mv='1.39', ok=(200, 201, 204)):
    status, resp = client.request(method, path, body, mv)
    if status not in ok:
        raise SystemExit('%s %s -> %s %s' % (method, path, status, resp))
    return resp


def build_cloud(client, cloud):
    aggs = cloud.get('aggregates', {})
    by_name = {}
    traits_made = set()
    for p in cloud['providers']:
        body = {'name': p['name'], 'uuid': p['uuid']}
        if p.get('parent'):
            body['parent_provider_uuid'] = by_name[p['parent']]
        _req(client, 'POST', '/resource_providers', body)
        by_name[p['name']] = p['uuid']
    for p in cloud['providers']:
        u = p['uuid']
        gen = _req(client, 'GET', '/resource_providers/%s' % u)['generation']
        invs = p.get('inventories') or {}
        if invs:
            for rc in invs:
                if rc.startswith('CUSTOM_'):
                    _req(client, 'PUT', '/resource_classes/%s' % rc)
            resp = _req(client, 'PUT', '/resource_providers/%s/inventories' % u,
                        {'resource_provider_generation': gen,
                         'inventories': invs})
            gen = resp['resource_provider_generation']
        if p.get('traits'):
            for t in p['traits']:
                if t.startswith('CUSTOM_') and t not in traits_made:
                    _req(client, 'PUT', '/traits/%s' % t)
                    traits_made.add(t)
            resp = _req(client, 'PUT', '/resource_providers/%s/traits' % u,
                        {'resource_provider_generation': gen,
                         'traits': p['traits']})
            gen = resp['resource_provider_generation']
        if p.get('aggregates'):
            _req(client, 'PUT', '/resource_providers/%s/aggregates' % u,
                 {'resource_provider_generation': gen,
                  'aggregates': [aggs[a] for a in p['aggregates']]})
    for t in cloud.get('extra_traits', []):
        _req(client, 'PUT', '/traits/%s' % t)
    for rc in cloud.get('extra_resource_classes', []):
        _req(client, 'PUT', '/resource_classes/%s' % rc)
    proj = str(uuidlib.uuid4())
    user = str(uuidlib.uuid4())
    for a in cloud.get('allocations', []):
        allocs = {by_name[name]: {'resources': res}
                  for name, res in a['resources'].items()}
        _req(client, 'PUT', '/allocations/%s' % a['consumer'],
             {'allocations': allocs, 'project_id': proj, 'user_id': user,
              'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    return by_name


def query_string(q, aggs, providers):
    mv = q['mv']

    def agg(a):
        return aggs.get(a, a)

    parts = []
    for g in q['groups']:
        s = g.get('suffix', '')
        if g.get('resources'):
            parts.append('resources%s=%s' % (s, ','.join(
                '%s:%d' % (rc, n) for rc, n in sorted(g['resources'].items()))))
        req = g.get('required') or []
        forb = g.get('forbidden') or []
        singles = [t[0] for t in req if len(t) == 1]
        multis = [t for t in req if len(t) > 1]
        first = singles + ['!' + t for t in forb]
        if first:
            parts.append('required%s=%s' % (s, ','.join(first)))
        for m in multis:
            parts.append('required%s=in:%s' % (s, ','.join(m)))
        mo = g.get('member_of') or []
        for m in mo:
            if len(m) == 1:
                parts.append('member_of%s=%s' % (s, agg(m[0])))
            else:
                parts.append('member_of%s=in:%s' % (
                    s, ','.join(agg(a) for a in m)))
        fa = g.get('forbidden_aggs') or []
        if len(fa) == 1:
            parts.append('member_of%s=!%s' % (s, agg(fa[0])))
        elif fa:
            parts.append('member_of%s=!in:%s' % (
                s, ','.join(agg(a) for a in fa)))
        if g.get('in_tree'):
            parts.append('in_tree%s=%s' % (
                s, providers.get(g['in_tree'], g['in_tree'])))
    if q.get('group_policy'):
        parts.append('group_policy=' + q['group_policy'])
    if q.get('limit'):
        parts.append('limit=%d' % q['limit'])
    rr = list(q.get('root_required') or []) + [
        '!' + t for t in q.get('root_forbidden') or []]
    if rr:
        parts.append('root_required=' + ','.join(rr))
    for ss in q.get('same_subtree') or []:
        parts.append('same_subtree=' + ','.join(ss))
    del mv
    return '&'.join(parts)


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    with open(argv[0]) as f:
        cloud = json.load(f)
    client = placement_ref.make_client()
    providers = build_cloud(client, cloud)
    out = []
    for q in cloud.get('queries', []):
        qs = query_string(q, cloud.get('aggregates', {}), providers)
        status, body = placement_ref.query(client, qs, '1.%d' % q['mv'])
        out.append({'name': q['name'], 'mv': q['mv'], 'query': qs,
                    'status': status, 'body': body})
    text = json.dumps(out, indent=1, sort_keys=True) + '\n'
    if len(argv) > 1:
        with open(argv[1], 'w') as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main(sys.argv[1:])
