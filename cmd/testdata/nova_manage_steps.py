"""Run several nova-manage commands in one Python process (Nova's import
takes seconds): each line of standard input is a JSON list of arguments
after "nova-manage"; after each command this prints "@@rc N" on its own
line and waits for the next. Output of the command comes before it."""
import json
import sys

from nova.cmd import manage
from nova import config


def main():
    for line in sys.stdin:
        argv = json.loads(line)
        sys.argv = ['nova-manage'] + argv
        try:
            rc = manage.main()
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        # Let the next main() register and parse its options again; the
        # database engines started by the first stay (same config file).
        manage.CONF.reset()
        config.main_db_api.configure = lambda conf: None
        config.api_db_api.configure = lambda conf: None
        sys.stdout.flush()
        print('@@rc %s' % (rc or 0), flush=True)


if __name__ == '__main__':
    main()
