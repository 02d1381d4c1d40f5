"""Shape records: one committed file per object version.

``<directory>/<Object>/<X.Y>.json`` holds what version X.Y of the
object is, as resobj.objects.shape describes it, and, where it was
recorded from the code, the version's fingerprint::

    {
      "fields": {"host": "String or None", "vcpus": "NonNegativeInteger"},
      "fingerprint": "1.5-8f021f1a850fa0f2e20f713b1674e275"
    }

A record is written once, when its version is new, and never rewritten:
:func:`write` refuses an existing file. Changing one means deleting it,
which review sees.
"""

import json
import os
from typing import NamedTuple


class Record(NamedTuple):
    """One version's recorded shape: {field: description}, fingerprint."""

    fields: dict
    fingerprint: str | None


def path(directory, objname, version):
    return os.path.join(directory, objname, '%s.json' % version)


def read(directory, objname, version):
    """The Record of ``objname`` ``version``, or None if there is none."""
    try:
        with open(path(directory, objname, version), encoding='utf-8') as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    return Record(dict(data['fields']), data.get('fingerprint'))


def dumps(record):
    data = {'fields': dict(sorted(record.fields.items()))}
    if record.fingerprint:
        data['fingerprint'] = record.fingerprint
    return json.dumps(data, indent=2, sort_keys=True) + '\n'


def write(directory, objname, version, record):
    """Write a new record; FileExistsError if the version has one."""
    target = path(directory, objname, version)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, 'x', encoding='utf-8') as f:
        f.write(dumps(record))
    return target


def recorded(directory):
    """{object name: [versions]} of every record in ``directory``."""
    found = {}
    if not os.path.isdir(directory):
        return found
    for objname in sorted(os.listdir(directory)):
        folder = os.path.join(directory, objname)
        if os.path.isdir(folder):
            found[objname] = sorted(
                name[:-len('.json')] for name in os.listdir(folder)
                if name.endswith('.json'))
    return found
