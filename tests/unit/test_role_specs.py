"""Every role's defaults/main.yml and meta/argument_specs.yml agree.

Each public default must be documented in the main entry point with the same default value, and
every documented option that has a default must have it in defaults/main.yml. Options without a
default (required inputs) are allowed in the spec only.
"""
import pathlib

import pytest
import yaml

ROLES = sorted(p for p in (pathlib.Path(__file__).resolve().parents[2] / "roles").iterdir() if (p / "tasks").is_dir()) \
    if (pathlib.Path(__file__).resolve().parents[2] / "roles").is_dir() else []


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_role_has_readme_spec_and_molecule_scenario(role):
    assert (role / "README.md").is_file()
    assert (role / "meta" / "argument_specs.yml").is_file()
    # A role is proven by a scenario named after it, or by one whose converge runs it (the site scenario).
    scenarios = role.parents[1] / "molecule"
    named = [p for p in scenarios.iterdir() if p.name.startswith(role.name) and (p / "molecule.yml").is_file()]
    site = role.parents[1] / "playbooks" / "site.yml"
    fqcn = "radeonlab.llm.%s" % role.name
    site_runs_it = site.is_file() and fqcn in site.read_text()
    runs_it = [p for p in scenarios.glob("*/converge.yml") if fqcn in p.read_text() or (site_runs_it and "site.yml" in p.read_text())]
    # an internal role is proven by the scenarios of the roles that import it
    importers = [p.parents[1].name for p in role.parent.glob("*/tasks/*.yml")
                 if p.parents[1] != role and "name: %s\n" % fqcn in p.read_text()]
    proven_importers = [name for name in importers if (scenarios / name / "molecule.yml").is_file()]
    assert named or runs_it or proven_importers, "no molecule scenario runs %s" % role.name


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_defaults_match_argument_specs(role):
    defaults_file = role / "defaults" / "main.yml"
    defaults = _load(defaults_file) if defaults_file.is_file() else {}
    options = _load(role / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]

    undocumented = sorted(set(defaults) - set(options))
    assert not undocumented, "defaults not in meta/argument_specs.yml: %s" % undocumented

    for name, spec in options.items():
        assert name.startswith(role.name + "_"), "%s is not prefixed with the role name" % name
        assert spec.get("description"), "%s has no description" % name
        if "default" in spec:
            assert name in defaults, "%s has a documented default but none in defaults/main.yml" % name
            assert spec["default"] == defaults[name], "%s: spec default %r != defaults %r" % (name, spec["default"], defaults[name])
        elif name in defaults:
            pytest.fail("%s is in defaults/main.yml but its spec has no default" % name)


def test_some_roles_exist_once_roles_land():
    # Guards against the parametrized tests silently collecting nothing because of a path error.
    roles_dir = pathlib.Path(__file__).resolve().parents[2] / "roles"
    assert roles_dir.is_dir()
    assert [p.name for p in ROLES] == sorted(p.name for p in roles_dir.iterdir() if (p / "tasks").is_dir())
