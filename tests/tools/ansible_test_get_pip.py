"""Stand-in for the get-pip.py that ansible-test downloads from ci-files.testing.ansible.com.

`ansible-test sanity` creates an empty venv per test and runs its cached get-pip script there
(as ``__main__``, with pip's arguments, e.g. ``--disable-pip-version-check pip==24.2
--no-setuptools --no-wheel``). That host is unreachable here, so `make sanity-bootstrap` copies
this file to ``~/.ansible/test/cache/get_pip_<ver>.py``. It does what get-pip.py does, from what
every CPython has: run the pip wheel bundled with ``ensurepip`` from ``sys.path`` and let it
install the requested pip from the configured package index (PyPI or a mirror).
"""

import glob
import os
import sys

import ensurepip


def main():
    bundled = glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl"))
    if not bundled:
        sys.exit("ensurepip has no bundled pip wheel in this Python")
    sys.path.insert(0, sorted(bundled)[-1])
    # get-pip.py options with no pip equivalent: setuptools/wheel are simply not requested.
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel

    sys.exit(pip_main(["install", "--upgrade", "--force-reinstall"] + args))


if __name__ == "__main__":
    main()
