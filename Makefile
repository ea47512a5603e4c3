# radeonlab.llm - developer and CI entry points. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT := $(CURDIR)
PYTHON ?= python3.11
VENV := $(ROOT)/.venv
CACHE := $(ROOT)/.cache
# The lowest ansible-core the collection states (requirements-min.txt), for README's quick start.
VENV_MIN := $(CACHE)/venv-min
BUILD := $(ROOT)/build
# The checkout is not under ansible_collections/; this symlink tree gives it its FQCN name.
COLLECTION_PATH := $(CACHE)/collection_path
COLLECTION_LINK := $(COLLECTION_PATH)/ansible_collections/radeonlab/llm
SANITY_ROOT := $(BUILD)/sanity/ansible_collections/radeonlab/llm
# Slowest first, so two lanes finish together; any scenario not listed runs last.
SLOW_SCENARIOS := site llamafactory site_bad_input rocm_driver rocm_driver_firmware_epoch rocm_driver_no_gpu_access
# A scenario left out of `make test` is named here, openly, with the reason (none is, today). Checks left out of
# `make test` carry @pytest.mark.full_only (tests/tools/pytest_full_only.py): each scenario's log names them and the
# closing table counts them; `make test-full` runs them.
NOT_IN_MAKE_TEST :=
ALL_SCENARIOS := $(sort $(notdir $(patsubst %/molecule.yml,%,$(wildcard molecule/*/molecule.yml))))
TEST_SCENARIOS := $(filter-out $(NOT_IN_MAKE_TEST),$(ALL_SCENARIOS))
SCENARIOS ?= $(filter $(TEST_SCENARIOS),$(SLOW_SCENARIOS)) $(filter-out $(SLOW_SCENARIOS),$(TEST_SCENARIOS))

export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTION_PATH)
export ANSIBLE_INJECT_FACT_VARS := false
# inventory/lab and the site scenario find the lab artefacts (.cache/lab, .cache/wheelhouse) here.
export RADEONLAB_ROOT := $(ROOT)
export PY_COLORS := 0
# lora_job copies its runner package as a directory: no __pycache__ from the unit tests may ride along.
export PYTHONDONTWRITEBYTECODE := 1
export ANSIBLE_NOCOLOR := 1
# molecule's docker create/destroy talk to dockerd with a 60 s read timeout by default; removing a container that holds
# a 7 GB venv took longer than that on a busy 2-core machine and failed a scenario whose tests had passed.
export DOCKER_TIMEOUT := 300

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

# --- toolchain -------------------------------------------------------------------------------
$(VENV)/.installed: requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "need Python >= 3.11 as $(PYTHON)"; exit 1; }
	[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

$(VENV_MIN)/.installed: requirements-min.txt
	[ -x $(VENV_MIN)/bin/python ] || $(PYTHON) -m venv $(VENV_MIN)
	$(VENV_MIN)/bin/pip install --quiet --disable-pip-version-check -r requirements-min.txt
	touch $@

.PHONY: venv
venv: $(VENV)/.installed $(COLLECTION_LINK) ## Project-local venv with the pinned toolchain

$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(ROOT) $@

# ansible-test builds a venv per sanity test and bootstraps pip in it with a script it downloads
# from ci-files.testing.ansible.com, which this network cannot reach. It looks for a cached copy
# at ~/.ansible/test/cache/get_pip_<version>.py first: put our stand-in there (it runs the pip
# wheel that ensurepip bundles and installs the requested pip from PyPI). shellcheck is installed so
# that its sanity test runs here as in CI instead of being skipped.
ANSIBLE_TEST_PIP = $(shell $(VENV)/bin/python -c "import re, ansible_test, pathlib; p = pathlib.Path(ansible_test.__file__).parent / '_internal/python_requirements.py'; print(re.search(r\"pip='([0-9.]+)'\", p.read_text()).group(1))")
.PHONY: sanity-bootstrap
sanity-bootstrap: venv
	@command -v shellcheck >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }
	install -D -m 0644 tests/tools/ansible_test_get_pip.py $(HOME)/.ansible/test/cache/get_pip_$(subst .,_,$(ANSIBLE_TEST_PIP)).py

# tests/unit/lora_job/test_report_browser.py opens the fleet report in headless Chromium (Debian's chromium).
.PHONY: units-bootstrap
units-bootstrap:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# --- checks ----------------------------------------------------------------------------------
.PHONY: lint
lint: venv ## yamllint + ansible-lint (production profile)
	yamllint --strict .
	ansible-lint --offline

.PHONY: sanity
sanity: sanity-bootstrap ## ansible-test sanity on a copy installed as ansible_collections/radeonlab/llm
	rm -rf $(BUILD)/sanity && mkdir -p $(SANITY_ROOT)
	git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -P {} $(SANITY_ROOT)/ 2>/dev/null || true
	cd $(SANITY_ROOT) && git init -q . && git add -A
	cd $(SANITY_ROOT) && ansible-test sanity --python 3.11 --color no --exclude molecule/ --exclude tests/lab/ --exclude tests/bed/

.PHONY: units
units: venv units-bootstrap ## Plain pytest over module_utils, modules, filters, role specs
	pytest -q -rs tests/unit

.PHONY: quick-start
quick-start: venv $(VENV_MIN)/.installed ## README's quick start as written, fresh HOME, pinned and lowest stated ansible-core
	tests/tools/check_quick_start.sh $(VENV)/bin
	tests/tools/check_quick_start.sh $(VENV_MIN)/bin

.PHONY: changelog-lint
changelog-lint: venv
	antsibull-changelog lint

.PHONY: build
build: venv ## Build the collection tarball and install it into a temporary path
	rm -rf $(BUILD)/dist && mkdir -p $(BUILD)/dist
	ansible-galaxy collection build --force --output-path $(BUILD)/dist .
	tests/tools/check_build.sh $(BUILD)/dist/radeonlab-llm-*.tar.gz

# --- the container test bed ------------------------------------------------------------------
.PHONY: bed
bed: ## Docker engine (no bridge, no iptables) + cached Debian 12 systemd image
	tests/bed/bed.sh all

.PHONY: mirror
mirror: ## Build (content-keyed) and serve the lab's signed stand-in of repo.radeon.com on 127.0.0.1:8765
	tests/lab/mirror/build.sh
	tests/lab/mirror/serve.sh start
	tests/lab/mirror/check.sh

.PHONY: wheelhouse
wheelhouse: ## Serve .cache/wheelhouse on 127.0.0.1:8768 as a user would by hand (the role scenarios' path; site.yml serves its own)
	tests/lab/wheelhouse/serve.sh start

.PHONY: tinymodel
tinymodel: venv ## Build the lab's tiny Qwen2-shaped model and alpaca data set (no hub), and its stand-in hub; content-keyed
	python tests/lab/tinymodel/build.py $(CACHE)/lab/tinymodel
	python tests/lab/tinymodel/hub.py $(CACHE)/lab/tinymodel/model $(CACHE)/lab/hub

# The scenarios' prepare steps start the hand-served wheelhouse they use. Whatever the outcome, the lab
# servers this run started are stopped at the end, so nothing of `make test` keeps listening; one that was
# already up, and the mirror while a `make lab` fleet exists (its apt sources name it), are left as they were.
.PHONY: molecule
molecule: venv bed tinymodel ## molecule test for every scenario, two at a time (SCENARIOS="a b" to choose)
	mirror_up=0; wheelhouse_up=0; \
	tests/lab/mirror/serve.sh status >/dev/null 2>&1 && mirror_up=1; \
	tests/lab/wheelhouse/serve.sh status >/dev/null 2>&1 && wheelhouse_up=1; \
	rc=0; $(MAKE) mirror && tests/tools/molecule_all.sh $(SCENARIOS) || rc=$$?; \
	[ $$wheelhouse_up = 1 ] || tests/lab/wheelhouse/serve.sh stop; \
	[ $$mirror_up = 1 ] || [ -n "$$(docker ps -aq --filter label=radeonlab.lab 2>/dev/null)" ] || tests/lab/mirror/serve.sh stop; \
	exit $$rc

# Each scenario's verify must fail when converge is skipped: how many of its checks fail, per scenario, into
# build/results/mutation.md (part of `make test-full`, not of `make test`).
.PHONY: mutation
mutation: venv bed tinymodel ## Mutation run: per scenario, how many checks fail without converge, into build/results/mutation.md (SCENARIOS="a b")
	mirror_up=0; wheelhouse_up=0; \
	tests/lab/mirror/serve.sh status >/dev/null 2>&1 && mirror_up=1; \
	tests/lab/wheelhouse/serve.sh status >/dev/null 2>&1 && wheelhouse_up=1; \
	rc=0; $(MAKE) mirror && \
	MUTATION_COMMAND='make mutation$(if $(filter command line environment,$(origin SCENARIOS)), SCENARIOS="$(SCENARIOS)")' \
	tests/tools/mutation_run.sh $(SCENARIOS) || rc=$$?; \
	[ $$wheelhouse_up = 1 ] || tests/lab/wheelhouse/serve.sh stop; \
	[ $$mirror_up = 1 ] || [ -n "$$(docker ps -aq --filter label=radeonlab.lab 2>/dev/null)" ] || tests/lab/mirror/serve.sh stop; \
	exit $$rc

# The lowest stated ansible-core (requirements-min.txt, meta/runtime.yml) runs one role scenario for real: gpu_groups'
# converge and idempotence use its ansible-playbook (first on PATH; molecule and testinfra stay the pinned venv's, and
# community.docker, which molecule's docker driver needs, is the one the pinned `ansible` bundles), and the log must
# show that core (ansible-playbook prints its version from -vv). Part of `make test-full`.
.PHONY: molecule-min
molecule-min: venv bed $(VENV_MIN)/.installed ## gpu_groups' scenario with the lowest stated ansible-core's ansible-playbook
	rc=0; bundled=$$($(VENV)/bin/python -c 'import ansible_collections, os; print(os.path.dirname(list(ansible_collections.__path__)[0]))'); \
	PATH=$(VENV_MIN)/bin:$$PATH MOLECULE_LOG_DIR=$(BUILD)/molecule-min ANSIBLE_VERBOSITY=2 \
	  ANSIBLE_COLLECTIONS_PATH=$(COLLECTION_PATH):$$bundled \
	  tests/tools/molecule_all.sh gpu_groups || rc=$$?; \
	core=$$($(VENV_MIN)/bin/ansible-playbook --version | sed -n '1s/.*\[core \(.*\)\]/\1/p'); \
	grep -q "ansible-playbook \[core $$core\]" $(BUILD)/molecule-min/gpu_groups.log \
	  || { echo "molecule-min: the scenario's log does not show ansible-core $$core"; rc=1; }; \
	exit $$rc

# No test writes docs/: result pages (reliability*.md, distributed_lab.md, mutation.md) go to build/results/.
.PHONY: results-to-docs
results-to-docs: ## Keep the last run's result pages: copy build/results/*.md over docs/
	@pages=$$(ls $(BUILD)/results/*.md 2>/dev/null); \
	[ -n "$$pages" ] || { echo "results-to-docs: no pages in $(BUILD)/results: run the scenarios first"; exit 1; }; \
	cp -v $$pages $(ROOT)/docs/ && \
	{ grep -l "^Not run yet" $$pages | sed "s|^|results-to-docs: a section of this page was not run this time (check git diff docs/): |" || true; }

.PHONY: lab-servers-down
lab-servers-down: ## Stop the lab's mirror and hand-served wheelhouse (127.0.0.1:8765, :8768)
	tests/lab/wheelhouse/serve.sh stop
	tests/lab/mirror/serve.sh stop

# --- entry points --------------------------------------------------------------------------
.PHONY: static
static: lint sanity units changelog-lint build quick-start ## Everything CI checks but the molecule scenarios

# The static checks and the molecule scenarios at once: the static checks keep one core busy, mostly while the lab's
# setup waits on the network and the disk (debootstrap, the mirror, the first wheelhouse downloads from PyPI), where the
# scenarios would otherwise leave it idle. Each side's lines carry its name; both run to the end, and either failing
# fails the target. sanity-bootstrap's and units-bootstrap's apt-get run before both, so that they never wait on bed.sh's dpkg lock.
.PHONY: test
test: venv sanity-bootstrap units-bootstrap ## What CI checks, within 45 min on 2 cores (static checks and molecule side by side)
	@start=$$(date +%s); mkdir -p $(BUILD); python3 tests/tools/machine_cpu.py snapshot $(BUILD)/make_test.cpu; \
	tests/tools/check_clean_tree.sh --save $(BUILD)/make_test.tree; \
	{ $(MAKE) static 2>&1 | sed -u 's/^/static | /'; exit "$${PIPESTATUS[0]}"; } & static_pid=$$!; \
	molecule_rc=0; $(MAKE) molecule 2>&1 | sed -u 's/^/molecule | /' || molecule_rc=$$?; \
	static_rc=0; wait $$static_pid || static_rc=$$?; \
	echo "make test: static checks $$([ $$static_rc = 0 ] && echo passed || echo FAILED), molecule $$([ $$molecule_rc = 0 ] && echo passed || echo FAILED), $$(( $$(date +%s) - start ))s"; \
	python3 tests/tools/machine_cpu.py since $(BUILD)/make_test.cpu "make test: the machine"; \
	[ $$static_rc = 0 ] && [ $$molecule_rc = 0 ]
	@tests/tools/check_clean_tree.sh --since $(BUILD)/make_test.tree
	@echo "make test: all checks passed"

# `make test` must end within 45 minutes on CI's 2-core machine. `make test-full` is everything: the checks make test
# leaves to it (the site's job faults, its two-host jobs, check mode on the fleet, the apt and pip faults), one role
# scenario under the lowest stated ansible-core, then the mutation runs. Run it for
# any change to roles/lora_job, playbooks/ or the runner.
.PHONY: test-full
test-full: ## make test with every check, then the mutation runs (a change to roles/lora_job, playbooks/ or the runner)
	@start=$$(date +%s); \
	RADEONLAB_TEST_FULL=1 $(MAKE) test && $(MAKE) molecule-min && $(MAKE) mutation && \
	echo "make test-full: all checks passed, $$(( $$(date +%s) - start ))s"

# site.yml creates the training account and serves the wheelhouse itself (for the run only), as on a
# real fleet; the lab leaves up only its stand-in of repo.radeon.com, which the hosts' apt sources name.
.PHONY: lab
lab: venv bed mirror tinymodel ## The main job: site.yml on the two lab workstations, ending in a LoRA fine-tune
	ansible-playbook -i inventory/lab tests/lab/lab.yml
	ansible-playbook -i inventory/lab playbooks/site.yml
	@echo "make lab: fleet report in $(ROOT)/lab-results/report.md and report.html"
	@echo "make lab: left running for the lab: containers lab-navi31, lab-navi22 and the apt mirror stand-in on $$(tests/lab/mirror/serve.sh url) (make lab-down stops them)"

.PHONY: lab-down
lab-down: venv ## Remove the lab fleet, stop its servers and delete its results (caches stay)
	ansible-playbook -i inventory/lab tests/lab/lab.yml -e lab_state=absent
	$(MAKE) lab-servers-down
	rm -rf $(ROOT)/lab-results

.PHONY: clean
clean: ## Remove build output (keeps the venv and cached images)
	rm -rf $(BUILD) $(CACHE)/collection_path .pytest_cache
