"""What users copy runs: every role variable in inventory/example passes that role's argument spec.

The values are checked with Ansible's own ArgumentSpecValidator (what the roles' argument-spec
validation runs), so a type the spec refuses here (an int for a float, a string for a list) is refused
on a real fleet too. A role-prefixed name that no spec documents is a typo the play would ignore.
"""
import pathlib
import re

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory" / "example"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())
TEMPLATED = re.compile(r"\{\{.*\}\}", re.S)
REFERENCE = re.compile(r"^\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}$")


def _inventory_vars():
    """Every variable set in the example inventory: group_vars files and the hosts' vars, with where it was set."""
    found = []
    for path in sorted((INVENTORY / "group_vars").glob("*.yml")):
        for name, value in (yaml.safe_load(path.read_text()) or {}).items():
            found.append((path.name, name, value))

    def walk(group, where):
        for host, host_vars in (group.get("hosts") or {}).items():
            for name, value in (host_vars or {}).items():
                found.append(("%s host %s" % (where, host), name, value))
        for name, value in (group.get("vars") or {}).items():
            found.append(("%s vars" % where, name, value))
        for child_name, child in (group.get("children") or {}).items():
            walk(child or {}, child_name)

    walk(yaml.safe_load((INVENTORY / "hosts.yml").read_text())["all"], "all")
    return found


def _role_of(name):
    owners = [role for role in ROLES if name.startswith(role + "_")]
    return max(owners, key=len) if owners else None


def _options(role):
    return yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def _validator_spec(options):
    spec = {}
    for name, option in options.items():
        entry = {key: option[key] for key in ("type", "elements", "choices", "no_log") if key in option}
        if "options" in option:
            entry["options"] = _validator_spec(option["options"])
        spec[name] = entry
    return spec


def _resolved(value, plain):
    """A value as the role sees it: a bare reference to another inventory variable is followed."""
    if isinstance(value, str):
        match = REFERENCE.match(value.strip())
        if match and match.group(1) in plain:
            return _resolved(plain[match.group(1)], plain)
    return value


VARIABLES = [item for item in _inventory_vars() if _role_of(item[1])]


def test_the_example_sets_role_variables():
    assert len(VARIABLES) >= 20, "the example inventory sets only %d role variables" % len(VARIABLES)


@pytest.mark.parametrize("where,name,value", VARIABLES, ids=[item[1] for item in VARIABLES])
def test_example_value_passes_the_role_spec(where, name, value):
    role = _role_of(name)
    options = _options(role)
    assert name in options, "%s (%s) is not a documented variable of role %s: a typo the play would ignore" % (name, where, role)
    plain = {variable: value for _where, variable, value in _inventory_vars()}
    value = _resolved(value, plain)
    if isinstance(value, str) and TEMPLATED.search(value):
        assert options[name].get("type", "str") in ("str", "path", "raw"), (
            "%s (%s) is a template that this test cannot evaluate, for a %s option" % (name, where, options[name]["type"]))
        return
    result = ArgumentSpecValidator({name: _validator_spec(options)[name]}).validate({name: value})
    assert not result.error_messages, "%s = %r (%s): %s" % (name, value, where, "; ".join(result.error_messages))
    if isinstance(options[name].get("default"), float) or options[name].get("type") == "float":
        assert isinstance(result.validated_parameters[name], float)
