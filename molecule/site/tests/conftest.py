"""A check that shows one host's outcome runs on that host only (`@pytest.mark.only_on(name)`).

Testinfra runs every check once per host of the scenario; a check about one host would assert nothing on the
others. Those runs are deselected here, so they neither pass nor count as skipped.
"""


def pytest_configure(config):
    config.addinivalue_line("markers", "only_on(*hosts): run this check on the named inventory hosts only")


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("only_on")
        callspec = getattr(item, "callspec", None)
        target = callspec.params.get("_testinfra_host") if callspec else None
        if marker and target is not None and target.backend.get_hostname() not in marker.args:
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
