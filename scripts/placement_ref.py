#!/usr/bin/python3
"""Ask the real OpenStack Placement (Debian python3-placement 8.0.0) what it
answers to GET /allocation_candidates, in-process on in-memory SQLite.

Run with the system interpreter, which has the placement package:

    /usr/bin/python3 scripts/placement_ref.py < queries.jsonl
    /usr/bin/python3 scripts/placement_ref.py --golden \
        < candidates/testdata/parse_cases.jsonl \
        > candidates/testdata/parse_golden.json

Stdin mode reads JSON lines {"query": "...", "microversion": "1.NN"} and
prints one JSON line {"status": N, "body": {...}} per query ("body" is the
raw text when the answer is not JSON).

The query string is handed to the WSGI app byte for byte (QUERY_STRING), not
through an HTTP client, because clients such as requests re-quote URLs and
would hide exactly the parsing quirks we want to observe. This is also why
placement.direct.PlacementDirect is not used: it needs wsgi_intercept, which
the Debian package does not pull in, and it goes through requests.

Other scripts can import this module:

    import placement_ref
    client = placement_ref.make_client()
    client.request('POST', '/resource_providers', {'name': 'cn1'}, '1.39')
    status, body = placement_ref.query(client, 'resources=VCPU:1', '1.39')
"""

import json
import sys
import warnings

warnings.filterwarnings('ignore')

from oslo_config import cfg  # noqa: E402
from oslo_policy import opts as policy_opts  # noqa: E402
import webob  # noqa: E402

from placement import conf as placement_conf  # noqa: E402
from placement import db_api  # noqa: E402
from placement import deploy  # noqa: E402


class Client(object):
    """A Placement WSGI app on a private in-memory database."""

    def __init__(self, app):
        self.app = app

    def request(self, method, path_qs, body=None, microversion='1.39'):
        """Issue a request; path_qs is the path plus an optional raw
        '?query'. Returns (status, parsed JSON body or raw text or None)."""
        path, _, qs = path_qs.partition('?')
        req = webob.Request.blank(path)
        req.method = method
        # WSGI carries the raw bytes of the query as a latin-1 str.
        req.environ['QUERY_STRING'] = qs.encode('utf-8').decode('latin-1')
        req.headers['x-auth-token'] = 'admin'
        req.headers['Accept'] = 'application/json'
        req.headers['OpenStack-API-Version'] = 'placement %s' % microversion
        if body is not None:
            req.body = json.dumps(body).encode('utf-8')
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        text = resp.body.decode('utf-8', 'replace')
        self.last_body = text  # exact bytes, for comparing error bodies
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return resp.status_code, parsed


def make_client():
    """Build a Placement app (noauth2, fresh sqlite:// database, synced)."""
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    policy_opts.set_defaults(conf)
    conf.set_override('connection', 'sqlite://', group='placement_database')
    conf.set_override('sync_on_startup', True, group='placement_database')
    conf.set_override('auth_strategy', 'noauth2', group='api')
    conf([], project='placement', default_config_files=[])
    db_api.configure(conf)
    return Client(deploy.loadapp(conf))


def query(client, qs, mv):
    """GET /allocation_candidates?qs at microversion mv ("1.NN")."""
    return client.request('GET', '/allocation_candidates?' + qs,
                          microversion=mv)


def parse(qs, mv):
    """Run only Placement's own query parsing (lib.RequestWideParams and
    lib.RequestGroup.dict_from_request) and return what it built, with every
    Python set as a sorted list and groups in Placement's dict order. Call it
    only for queries the handler accepted."""
    import microversion_parse
    from placement import lib
    from placement import microversion
    req = webob.Request.blank('/allocation_candidates')
    req.environ['QUERY_STRING'] = qs.encode('utf-8').decode('latin-1')
    req.environ[microversion.MICROVERSION_ENVIRON] = (
        microversion_parse.extract_version(
            {'openstack-api-version': 'placement %s' % mv}, 'placement',
            microversion.VERSIONS))
    rqparams = lib.RequestWideParams.from_request(req)
    groups = lib.RequestGroup.dict_from_request(req, rqparams)
    return {
        'limit': rqparams.limit or 0,
        'group_policy': rqparams.group_policy,
        'root_required': sorted(rqparams.anchor_required_traits or []),
        'root_forbidden': sorted(rqparams.anchor_forbidden_traits or []),
        'same_subtree': [sorted(s) for s in rqparams.same_subtrees],
        'groups': [{
            'suffix': suffix,
            'use_same_provider': g.use_same_provider,
            'resources': g.resources,
            'required_traits': [sorted(t) for t in g.required_traits],
            'forbidden_traits': sorted(g.forbidden_traits),
            'member_of': [sorted(a) for a in g.member_of],
            'forbidden_aggs': sorted(g.forbidden_aggs),
            'in_tree': g.in_tree,
        } for suffix, g in groups.items()],
    }


def _search_level(status, body):
    """Whether an answer got past query parsing: a success, or an error
    only the database lookup can raise."""
    if status == 200:
        return True
    try:
        detail = body['errors'][0]['detail']
    except (TypeError, KeyError, IndexError):
        return False
    return ('No such trait(s)' in detail or
            'Invalid resource class in resources parameter' in detail or
            'too large to convert to SQLite' in detail)


def add_provider(client, name, uuid, inventory=None, traits=None):
    """Create a root provider with optional inventory {rc: total} and
    traits (custom traits are created on the way)."""
    status, body = client.request(
        'POST', '/resource_providers', {'name': name, 'uuid': uuid})
    assert status == 200, (status, body)
    gen = body['generation']
    if inventory:
        status, body = client.request(
            'PUT', '/resource_providers/%s/inventories' % uuid,
            {'resource_provider_generation': gen,
             'inventories': {rc: {'total': t} for rc, t in inventory.items()}})
        assert status == 200, (status, body)
        gen = body['resource_provider_generation']
    if traits:
        for t in traits:
            if t.startswith('CUSTOM_'):
                client.request('PUT', '/traits/%s' % t)
        status, body = client.request(
            'PUT', '/resource_providers/%s/traits' % uuid,
            {'resource_provider_generation': gen, 'traits': traits})
        assert status == 200, (status, body)


# A provider so that successful parses also exercise a real search; the
# parser tests only look at statuses and errors, not at candidates.
CN1 = 'c0c0c0c0-0000-4000-8000-000000000001'


def seed(client):
    add_provider(client, 'cn1', CN1,
                 inventory={'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 100},
                 traits=['HW_CPU_X86_AVX2', 'CUSTOM_FOO'])


def main(argv):
    client = make_client()
    seed(client)
    if '--golden' in argv:
        # Same stdin as the line mode, one JSON array out with each case's
        # query, microversion and answer, for committing as test data.
        out = []
        for line in sys.stdin:
            if not line.strip():
                continue
            q = json.loads(line)
            status, body = query(client, q['query'], q['microversion'])
            q.update(status=status, body=body)
            if status != 200:
                q['raw_body'] = client.last_body
            if _search_level(status, body):
                q['parsed'] = parse(q['query'], q['microversion'])
            out.append(q)
        json.dump(out, sys.stdout, indent=1, ensure_ascii=False,
                  sort_keys=True)
        sys.stdout.write('\n')
        return
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        q = json.loads(line)
        status, body = query(client, q['query'], q.get('microversion',
                                                       '1.39'))
        print(json.dumps({'status': status, 'body': body}))
        sys.stdout.flush()


if __name__ == '__main__':
    main(sys.argv[1:])
