"""Stand-in for pip's transfer in the delivery benchmark (runs on a lab host): read the wheelhouse
server's listing, GET the named wheels into DEST and check each against the listing's sha256, as pip does.

    fetch.py URL DEST NAME...
"""
import hashlib
import os
import re
import sys
import urllib.request


def main(url, dest, names):
    with urllib.request.urlopen(url, timeout=30) as answer:
        page = answer.read().decode("utf-8")
    hashes = dict(re.findall(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', page))
    os.makedirs(dest, exist_ok=True)
    total = 0
    for name in names:
        digest = hashlib.sha256()
        with urllib.request.urlopen(url + name, timeout=60) as answer, open(os.path.join(dest, name), "wb") as out:
            for block in iter(lambda: answer.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
                total += len(block)
        if digest.hexdigest() != hashes.get(name):
            sys.exit("hash mismatch: %s" % name)
    print("fetched %d files, %d bytes" % (len(names), total))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
