#!/usr/bin/python3
"""Ask Nova 26 itself (Debian python3-nova) which Placement request a flavor
(and image) becomes: the request filters that need no other service, then
nova.scheduler.utils.resources_from_request_spec and to_querystring().

    /usr/bin/python3 scripts/nova_resource_request.py < cases.jsonl

Each input line is {"flavor": {"name", "vcpus", "memory_mb", "root_gb",
"ephemeral_gb", "swap", "extra_specs"}, "image": {"properties": {...},
"disk_format": "qcow2"} or null, "is_bfv": false, "pinning": true,
"image_metadata_prefilter": false, "image_type_support": false}. Each output
line is {"query": "...", "groups": [...], "group_policy", "root_required",
"root_forbidden", "limit", "cpu_pinning_requested"} or {"error": "Class",
"message": "..."}.
"""

import json
import logging
import sys

logging.disable(logging.CRITICAL)

from nova import objects  # noqa: E402

objects.register_all()

import nova.conf  # noqa: E402
from nova import context  # noqa: E402
from nova.scheduler import request_filter  # noqa: E402
from nova.scheduler import utils  # noqa: E402

CONF = nova.conf.CONF
CONF([], project='nova')

OFFLINE_FILTERS = ('require_image_type_support', 'compute_status_filter',
                   'transform_image_metadata', 'accelerators_filter',
                   'packed_virtqueue_filter',
                   'ephemeral_encryption_filter')


def build(case):
    CONF.set_override('image_metadata_prefilter',
                      case.get('image_metadata_prefilter', False),
                      group='scheduler')
    CONF.set_override('query_placement_for_image_type_support',
                      case.get('image_type_support', False),
                      group='scheduler')
    fl = case['flavor']
    flavor = objects.Flavor(
        name=fl['name'], vcpus=fl['vcpus'], memory_mb=fl['memory_mb'],
        root_gb=fl['root_gb'], ephemeral_gb=fl['ephemeral_gb'],
        swap=fl['swap'], extra_specs=dict(fl['extra_specs']))
    img = case.get('image') or {}
    meta = {'properties': img.get('properties', {}), 'name': 'img',
            'id': '11111111-2222-3333-4444-555555555555'}
    if img.get('disk_format'):
        meta['disk_format'] = img['disk_format']
    image = objects.ImageMeta.from_dict(meta)
    spec = objects.RequestSpec(flavor=flavor, image=image,
                               is_bfv=case.get('is_bfv', False))
    ctx = context.get_admin_context()
    for f in request_filter.ALL_REQUEST_FILTERS:
        if f.__name__ in OFFLINE_FILTERS:
            f(ctx, spec)
    rr = utils.resources_from_request_spec(
        ctx, spec, None, enable_pinning_translate=case.get('pinning', True))
    groups = []
    for ident, rg in rr._rg_by_id.items():
        groups.append({'suffix': ident or '',
                       'resources': dict(rg.resources),
                       'required_traits': sorted(rg.required_traits),
                       'forbidden_traits': sorted(rg.forbidden_traits)})
    groups.sort(key=lambda g: g['suffix'])
    return {'query': rr.to_querystring(), 'groups': groups,
            'group_policy': rr.group_policy or '',
            'root_required': sorted(rr._root_required),
            'root_forbidden': sorted(rr._root_forbidden),
            'limit': rr._limit or 0,
            'cpu_pinning_requested': rr.cpu_pinning_requested}


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        out = build(json.loads(line))
    except Exception as e:  # every exception is an answer to compare
        out = {'error': type(e).__name__, 'message': str(e)}
    print(json.dumps(out), flush=True)
