"""Run many openstack (python-openstackclient) commands in one process.

TestDifferentialOSC starts this once instead of one `openstack` per
command: importing openstackclient and loading its plugins is most of each
command's cost. Each line on stdin is a JSON list of arguments; for each,
one shell is built (as /usr/bin/openstack builds it) with sys.stdout
replaced, and the answer is written as "EXIT LENGTH\n" and LENGTH bytes
of the command's standard output. Standard error is left as it is.

osc_lib caches each API's client on the ClientManager class (ClientCache
descriptors), not on the instance: the first command's client, with its
--os-placement-api-version and endpoint, would answer every later command.
The caches are emptied before each command.
"""
import io
import json
import sys

from osc_lib import clientmanager as osc_clientmanager
from openstackclient import shell
from openstackclient.common import clientmanager


def forget_clients():
    for cls in clientmanager.ClientManager.__mro__:
        for attr in vars(cls).values():
            if isinstance(attr, osc_clientmanager.ClientCache):
                attr._handle = None


def main():
    out = sys.stdout.buffer
    for line in sys.stdin:
        argv = json.loads(line)
        forget_clients()
        captured = io.StringIO()
        sys.stdout = captured
        try:
            code = shell.OpenStackShell().run(argv)
        except SystemExit as e:  # argparse errors, --help
            code = e.code if isinstance(e.code, int) else 1
        finally:
            sys.stdout = sys.__stdout__
        data = captured.getvalue().encode('utf-8')
        out.write(b'%d %d\n' % (code or 0, len(data)))
        out.write(data)
        out.flush()


if __name__ == '__main__':
    main()
